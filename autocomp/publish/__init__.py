"""Publishing a run's benchmarks: `autocomp export RUN` writes every benchmark the run built
as a Hugging Face dataset folder a stranger can score without autocomp.

  rows.py      one config per (task, N, track, benchmark); rows with the image(s) embedded,
               the positive, every negative (or a recorded seeded subset) with its edit,
               Table 6 category and same-meaning flag, chance, concept and graph
  parquet.py   streamed parquet shards with the datasets features in their schema
  card.py      README.md: the Hub's YAML header and a body written from the run
  blind.py     the blind audit of the exported items (the card's no-shortcut evidence)
  adapters/    files for the harnesses people already run (CLIP_benchmark, mteb/MIEB,
               lmms-eval, VLMEvalKit), written beside the data
  hub.py       --push-to-hub: the folder as it is, through huggingface_hub
  export.py    the command's work: all of the above into one folder, atomically
"""
