#!/usr/bin/env python3
"""Every launch size of a kernel fuses the same products (docs/DESIGN_NOTES.md, "FMA contraction
in the tile kernels").

A kernel that launches at several sizes (tile sizes 1-256, group sizes) is compiled once per size,
and each of those kernels inlines the kernel's own arithmetic. On CUDA the results are the same
bits for every size only if each kernel computes every term alike, and nvcc's front end may fuse
either product of a*b + c*d with the addition: it chose differently in different tile sizes of the
fused cloth solve, which cost the GPU tests at 8-32 lanes (2026-11-28). ptxas fuses nothing in
the files checked here (-Xptxas=--fmad=false, or --fmad=false), so the PTX says which products
are fused.

For each `.entry` of the PTX files given, the kernel's name and functor (its mangled name without
the launch body `TilesBody<N>` / `GroupsBody<G>` / ...) select a group; within a group every entry
must hold the same multiset of fused multiply-adds, each described by its source line and the
operations that define its two factors (following register moves). Exits 1 and names the lines
where two sizes of a kernel differ; exits 2 if no kernel with two sizes was found (a check that
compares nothing must not pass).

Usage: fma_contraction_check.py FILE.ptx...   (CMake passes the PTX of the checked sources)
       fma_contraction_check.py --self-test
"""
import collections
import io
import re
import sys

ENTRY = re.compile(r"\.(?:visible\s+)?\.entry\s+(\S+)\(")
FILE = re.compile(r"\.file\s+(\d+)\s+\"([^\"]+)\"")
LOC = re.compile(r"\s*\.loc\s+(\d+)\s+(\d+)")
INSTRUCTION = re.compile(r"\s*(?:@!?%p\d+\s+)?([a-z][\w.]*)\s+([^;]*);")
BODY = re.compile(r"\d+((?:Tiles|Groups|Elements)Body(?:ILi(\d+)EE)?)")


def entries(ptx):
    """(mangled name, instruction text, file table) of every kernel in a PTX file."""
    files = {m.group(1): m.group(2).rsplit("/", 1)[-1] for m in FILE.finditer(ptx)}
    starts = list(ENTRY.finditer(ptx))
    for k, m in enumerate(starts):
        end = starts[k + 1].start() if k + 1 < len(starts) else len(ptx)
        yield m.group(1), ptx[m.end() : end], files


def group_key(name):
    """The kernel and functor of a mangled entry name, with its launch body left out; None for an
    entry that is not one of Weft's generated kernels."""
    m = re.match(r"_ZN4weft3gpu(\d+)", name)
    if not m:
        return None
    length = int(m.group(1))
    kernel = name[m.end() : m.end() + length]
    rest = name[m.end() + length :]
    return kernel, BODY.sub("#", rest)


def launch_body(name):
    """The launch body of a mangled entry name, e.g. TilesBody<8>."""
    m = BODY.search(name)
    if not m:
        return "?"
    return m.group(1).split("ILi")[0] + (f"<{m.group(2)}>" if m.group(2) else "")


def fused_products(text, files):
    """Multiset of (source line, sorted defining operations of the two factors) of every
    fma.rn.f32 in one entry."""
    definitions = {}
    location = None
    fused = collections.Counter()

    def origin(register, levels=2, moves=0):
        """The operation defining a register (through moves), with those defining its operands
        down to `levels` levels: which products were fused, not only their kind."""
        op_args = definitions.get(register)
        if op_args is None:
            return "parameter"
        op, args = op_args
        if op.startswith("mov") and args and args[0].startswith("%f") and moves < 16:
            return origin(args[0], levels, moves + 1)
        if op.startswith("mov") and args and not args[0].startswith("%"):
            return "immediate"
        if op.startswith("ld.param"):
            return "parameter"  # where the kernel reads its arguments is the compiler's choice
        if levels <= 1:
            return op
        inputs = sorted(origin(a, levels - 1) if a.startswith("%f") else "immediate" for a in args)
        return f"{op}({', '.join(inputs)})"

    for line in text.split("\n"):
        m = LOC.match(line)
        if m:
            line_number = int(m.group(2))
            location = (files.get(m.group(1), "?"), line_number) if line_number else None
            continue
        m = INSTRUCTION.match(line)
        if not m:
            continue
        op = m.group(1)
        args = [a.strip() for a in m.group(2).split(",")]
        if op.startswith("fma.rn.f32"):
            factors = sorted(origin(a) if a.startswith("%") else "immediate " + a for a in args[1:3])
            fused[(location, tuple(factors))] += 1
        if args and args[0].startswith("%f"):
            definitions[args[0]] = (op, args[1:])
    return fused


def check(ptx_texts, out=sys.stdout):
    """Number of differing (kernel, size) pairs, and of kernels compared, over the PTX texts."""
    groups = collections.defaultdict(list)
    for ptx in ptx_texts:
        for name, text, files in entries(ptx):
            key = group_key(name)
            if key is not None:
                groups[key].append((name, fused_products(text, files)))
    compared = differing = 0
    for (kernel, _), members in sorted(groups.items()):
        if len(members) < 2:
            continue
        compared += 1
        first_name, first = members[0]
        for name, fused in members[1:]:
            if fused == first:
                continue
            differing += 1
            lines = sorted(k for k in set(first) | set(fused) if first[k] != fused[k])
            print(f"{kernel}: {launch_body(first_name)} and {launch_body(name)} fuse different "
                  "products:", file=out)
            for location, factors in lines[:8]:
                print(f"  {location}: fma of ({', '.join(factors)}): "
                      f"{first[(location, factors)]} vs {fused[(location, factors)]}", file=out)
    return differing, compared


def self_test_entry(size, fuse_first):
    """A kernel of tile size `size` computing a·b + c·d, with the first or the second product
    fused with the addition."""
    fused, kept = ("%f1, %f2", "%f3, %f4") if fuse_first else ("%f3, %f4", "%f1, %f2")
    return (f".visible .entry _ZN4weft3gpu6kernelINS_6detail9TilesBodyILi{size}EEENS_1KEEEvT0_ii(\n"
            "{\n  .loc 1 10 0\n"
            "  ld.global.f32 %f1, [%rd1];\n  ld.global.f32 %f2, [%rd1+4];\n"
            "  sub.f32 %f3, %f1, %f2;\n  sub.f32 %f4, %f2, %f1;\n"
            f"  mul.f32 %f5, {kept};\n  mov.f32 %f6, %f5;\n"
            f"  fma.rn.f32 %f7, {fused}, %f6;\n}}\n")


def self_test():
    """The check finds a·b + c·d fused on the other product, and passes kernels fused alike."""
    header = '.file 1 "/src/kernels/math.h"\n'
    other = header + self_test_entry(1, True) + self_test_entry(8, False) + self_test_entry(16, True)
    differing, compared = check([other], io.StringIO())
    assert (compared, differing) == (1, 1), (compared, differing)
    alike = header + self_test_entry(1, True) + self_test_entry(8, True) + self_test_entry(16, True)
    differing, compared = check([alike], io.StringIO())
    assert (compared, differing) == (1, 0), (compared, differing)
    print("self-test passed: a product fused on the other side is found, kernels fused alike pass")
    return 0


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    if not argv:
        print(__doc__)
        return 2
    texts = []
    for path in argv:
        with open(path) as f:
            texts.append(f.read())
    differing, compared = check(texts)
    if compared == 0:
        print("no kernel with two launch sizes in", " ".join(argv))
        return 2
    print(f"{compared} kernels with several launch sizes in {len(argv)} PTX files: "
          f"{differing} sizes fuse other products than the first")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
