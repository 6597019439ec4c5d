#!/usr/bin/python3
"""Check (or rewrite) README.md's export option sections against `onnxport options --markdown`.

The generator prints named sections, each from `<!-- BEGIN name ...` to `<!-- END name -->`,
made from the option table in the core. README.md holds the same sections; the check fails
with a diff when one differs, is missing, or README has a section the generator does not make.

Usage: /usr/bin/python3 readme_options.py ONNXPORT [--write] [--readme FILE]
  --write   replace README's sections with the generated ones instead of checking them
"""
import argparse
import difflib
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
SECTION = re.compile(r"<!-- BEGIN (?P<name>[\w-]+)\b.*?<!-- END (?P=name) -->", re.DOTALL)


def sections(text):
    return {m.group("name"): m for m in SECTION.finditer(text)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("onnxport", help="the onnxport CLI")
    parser.add_argument("--write", action="store_true", help="rewrite README's sections instead of checking them")
    parser.add_argument("--readme", default=os.path.join(ROOT, "README.md"))
    options = parser.parse_args()

    generated = subprocess.run([options.onnxport, "options", "--markdown"], check=True, capture_output=True,
                               text=True).stdout
    fresh = {name: m.group(0) for name, m in sections(generated).items()}
    if not fresh:
        print("FAIL: `onnxport options --markdown` printed no sections")
        return 1
    with open(options.readme) as f:
        readme = f.read()
    committed = sections(readme)

    if options.write:
        missing = sorted(set(fresh) - set(committed))
        if missing:
            print(f"FAIL: {options.readme} has no section {', '.join(missing)}: add the lines\n"
                  + "\n".join(f"  <!-- BEGIN {n} -->\n  <!-- END {n} -->" for n in missing)
                  + "\nwhere it belongs, then run --write again.")
            return 1
        for name, m in sorted(committed.items(), key=lambda item: -item[1].start()):
            if name in fresh:
                readme = readme[:m.start()] + fresh[name] + readme[m.end():]
        with open(options.readme, "w") as f:
            f.write(readme)
        print(f"wrote sections {', '.join(sorted(fresh))} of {options.readme}")
        return 0

    problems = []
    for name in sorted(set(fresh) | set(committed)):
        if name not in committed:
            problems.append(f"README has no section '{name}'")
        elif name not in fresh:
            problems.append(f"README has a section '{name}' that the option table does not generate")
        elif committed[name].group(0) != fresh[name]:
            diff = difflib.unified_diff(committed[name].group(0).splitlines(), fresh[name].splitlines(),
                                        f"README.md ({name})", "onnxport options --markdown", lineterm="", n=1)
            print("\n".join(diff))
            problems.append(f"README's section '{name}' is stale")
    if not problems:
        print(f"{options.readme}: sections {', '.join(sorted(fresh))} are up to date")
        return 0
    print("FAIL: " + "; ".join(problems) + ". Regenerate them with\n"
          "  /usr/bin/python3 tests/cli/readme_options.py build/bin/onnxport --write\nand commit README.md.")
    return 1


if __name__ == "__main__":
    sys.exit(main())
