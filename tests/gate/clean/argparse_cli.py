import argparse


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description="Resize images (dry run)")
    p.add_argument("paths", nargs="+")
    p.add_argument("--width", type=int, default=640)
    p.add_argument("-v", "--verbose", action="store_true")
    return p


args = build_parser().parse_args(["a.png", "b.png", "--width", "320", "-v"])
for path in args.paths:
    msg = f"would resize {path} to {args.width}px"
    print(msg if args.verbose else path)
