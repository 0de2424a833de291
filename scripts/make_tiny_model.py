"""Build a tiny random model from a config and save it to a folder, to try autocomp's
wiring on a CPU with no download (its scores mean nothing):

    python scripts/make_tiny_model.py vlm tiny-vlm        # a 2-layer Gemma-3 VLM
    python scripts/make_tiny_model.py clip tiny-clip      # a 2-layer CLIP (hf:)

The builders are the test suite's (tests/tiny_models.py): the same models the tests load
through the real loading code.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

BUILDERS = {"vlm": "tiny_gemma_vlm", "llava": "tiny_llava_vlm", "qwen2-vl": "tiny_qwen2_vl",
            "clip": "tiny_hf_clip", "open_clip": "tiny_open_clip"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=sorted(BUILDERS))
    parser.add_argument("folder", type=Path)
    args = parser.parse_args()
    import tiny_models

    made = getattr(tiny_models, BUILDERS[args.kind])(args.folder)
    print(made)


if __name__ == "__main__":
    main()
