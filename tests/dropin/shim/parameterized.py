"""Stand-in for the parameterized package: only parameterized_class, the one function PyTorch's
ONNX tests use, in both of its forms: (attrs, input_values, class_name_func), each row of
input_values giving the values of attrs, or (list of {attr: value} dicts, class_name_func=...).
Each row becomes a subclass, named by class_name_func, with those attribute values, added to the
module that defines the decorated class."""
import sys


def parameterized_class(attrs, input_values=None, class_name_func=None):
    rows = [dict(zip(attrs, values)) for values in input_values] if input_values is not None else list(attrs)

    def decorate(base):
        module = sys.modules[base.__module__]
        for idx, fields in enumerate(rows):
            name = class_name_func(base, idx, fields)
            setattr(module, name, type(name, (base,), {**fields, "__module__": base.__module__}))
        return base

    return decorate
