"""Execute every notebook in place (refreshes the committed outputs), e.g. on a GPU machine:

    PYTHONPATH=python python3 notebooks/execute.py [OUT_DIR [NAME ...]]

With OUT_DIR, the executed copies are written there instead of over the originals; NAMEs
(e.g. 05_profile_your_code.ipynb) execute only those notebooks.
"""
import os
import sys
from pathlib import Path

import nbclient
import nbformat

HERE = Path(__file__).resolve().parent


def main(out_dir=None, names=()) -> int:
    env_path = str(HERE.parent / "python")
    os.environ["PYTHONPATH"] = env_path + os.pathsep + os.environ.get("PYTHONPATH", "")
    os.environ.pop("MPLBACKEND", None)
    failed = 0
    for path in sorted(HERE.glob("*.ipynb")):
        if names and path.name not in names:
            continue
        nb = nbformat.read(str(path), as_version=4)
        client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                         resources={"metadata": {"path": str(HERE)}})
        try:
            client.execute()
        except nbclient.exceptions.CellExecutionError as e:
            print(f"{path.name}: FAILED\n{e}", file=sys.stderr)
            failed += 1
        target = Path(out_dir) / path.name if out_dir else path
        nbformat.write(nb, str(target))
        print(f"{path.name}: executed -> {target}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else None, tuple(sys.argv[2:])))
