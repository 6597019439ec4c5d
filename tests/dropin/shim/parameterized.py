"""Stand-in for the parameterized package: only parameterized_class, the one function PyTorch's
ONNX Runtime tests use. Each row of input_values becomes a subclass, named by class_name_func,
with those attribute values, added to the module that defines the decorated class."""
import sys


def parameterized_class(attrs, input_values, class_name_func):
    def decorate(base):
        module = sys.modules[base.__module__]
        for idx, values in enumerate(input_values):
            fields = dict(zip(attrs, values))
            name = class_name_func(base, idx, fields)
            setattr(module, name, type(name, (base,), {**fields, "__module__": base.__module__}))
        return base

    return decorate
