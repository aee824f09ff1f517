#!/usr/bin/env python3
"""The solvers' device code rounds approximately, the collision code exactly (docs/DESIGN_NOTES.md,
"Approximate division and square root in the solvers").

solver/solver_avbd.cpp and solver/solver_vbd.cpp are compiled with -prec-div=false
-prec-sqrt=false -ftz=true (solver/CMakeLists.txt); collision/*.cpp is not, because its contact
rows, lists and trees must equal the CPU's bit for bit. This check reads the PTX of both
(weft_ptx_objects, compiled with the same flags as the objects) and fails when either side has
the other's arithmetic: a solver PTX with single-precision arithmetic that does not flush
denormals, a correctly rounded square root or no approximate division (the flags were lost), or a
collision PTX with any flushing or approximate operation (the flags spread to it).

Usage: ptx_rounding_check.py --approximate SOLVER.ptx ... --exact COLLISION.ptx ...
       ptx_rounding_check.py --self-test
"""
import argparse
import re
import sys

# Single-precision arithmetic that -ftz=true marks .ftz (comparisons too: setp).
ARITH = re.compile(r"\b(add|sub|mul|fma|mad|div|sqrt|rcp|rsqrt|min|max|abs|neg|setp)"
                   r"((?:\.[a-z0-9]+)*)\.f32\b")


def ops(text):
    """(opcode, modifiers, line number) of every single-precision arithmetic instruction."""
    for number, line in enumerate(text.splitlines(), 1):
        code = line.split("//", 1)[0]
        for m in ARITH.finditer(code):
            yield m.group(1), m.group(2).split(".")[1:], number


def check_approximate(name, text):
    """Problems of a solver PTX: arithmetic without .ftz, correctly rounded square roots, and no
    approximate division at all. Correctly rounded divisions that flush (div.rn.ftz) are allowed:
    libdevice's atan2f divides that way whatever -prec-div says."""
    problems, approximate_divisions = [], 0
    for op, mods, number in ops(text):
        if "ftz" not in mods:
            instruction = ".".join([op] + mods + ["f32"])
            problems.append(f"{name}:{number}: {instruction} does not flush denormals")
        if op == "sqrt" and "rn" in mods:
            problems.append(f"{name}:{number}: sqrt.rn is the correctly rounded square root")
        if op == "div" and ("full" in mods or "approx" in mods):
            approximate_divisions += 1
    if approximate_divisions == 0:
        problems.append(f"{name}: no approximate division (div.full, div.approx): "
                        "was -prec-div=false lost?")
    return problems


def check_exact(name, text):
    """Problems of a collision PTX: any flushing or approximate single-precision operation."""
    problems = []
    for op, mods, number in ops(text):
        bad = [m for m in mods if m in ("ftz", "approx", "full")]
        if bad:
            problems.append(f"{name}:{number}: {op}.{'.'.join(mods + ['f32'])} is not exact IEEE "
                            f"arithmetic ({', '.join(bad)})")
    return problems


def self_test():
    good_solver = ("div.full.ftz.f32 %f1, %f2, %f3;\nsqrt.approx.ftz.f32 %f4, %f1;\n"
                   "div.rn.ftz.f32 %f5, %f4, %f1; // atan2f\nsetp.lt.ftz.f32 %p1, %f5, %f4;\n")
    good_collision = "div.rn.f32 %f1, %f2, %f3;\nsqrt.rn.f32 %f4, %f1;\nmul.f32 %f5, %f4, %f1;\n"
    cases = [
        ("a solver PTX as built", check_approximate, good_solver, 0),
        ("a solver PTX without -ftz", check_approximate,
         good_solver + "add.f32 %f6, %f5, %f4;\n", 1),
        ("a solver PTX with sqrt.rn", check_approximate,
         good_solver + "sqrt.rn.ftz.f32 %f6, %f5;\n", 1),
        ("a solver PTX without -prec-div=false", check_approximate,
         "div.rn.ftz.f32 %f1, %f2, %f3;\n", 1),
        ("a collision PTX as built", check_exact, good_collision, 0),
        ("a collision PTX with -ftz", check_exact,
         good_collision + "fma.rn.ftz.f32 %f6, %f5, %f4, %f1;\n", 1),
        ("a collision PTX with approximate division", check_exact,
         good_collision + "div.full.f32 %f6, %f5, %f4;\n", 1),
        ("a comment is not an instruction", check_exact,
         good_collision + "// div.full.ftz.f32\n", 0),
    ]
    failed = 0
    for what, check, text, expected in cases:
        found = len(check("self-test", text))
        if found != expected:
            print(f"self-test FAILED: {what}: {found} problems, expected {expected}")
            failed += 1
    print(f"self-test: {len(cases) - failed} of {len(cases)} cases as expected")
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--approximate", nargs="*", default=[],
                        help="PTX that must round approximately")
    parser.add_argument("--exact", nargs="*", default=[], help="PTX that must round exactly")
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    if not args.approximate and not args.exact:
        parser.error("name PTX files with --approximate and/or --exact")
    problems = []
    for path in args.approximate:
        problems += check_approximate(path, open(path).read())
    for path in args.exact:
        problems += check_exact(path, open(path).read())
    for p in problems[:40]:
        print(p)
    if len(problems) > 40:
        print(f"... and {len(problems) - 40} more")
    print(f"{len(args.approximate)} approximate and {len(args.exact)} exact PTX files: "
          f"{'no problem' if not problems else f'{len(problems)} problems'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
