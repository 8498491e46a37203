import tempfile
from pathlib import Path

with tempfile.TemporaryDirectory() as tmp:
    root = Path(tmp)
    (root / "data").mkdir()
    for i in range(3):
        (root / "data" / f"part{i}.txt").write_text(f"line {i}\n" * (i + 1))
    files = sorted(root.glob("data/*.txt"))
    for f in files:
        print(f.name, f.stat().st_size, len(f.read_text().splitlines()))
    print("suffixes:", {f.suffix for f in files})
