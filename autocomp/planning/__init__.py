"""Planning a run before it runs (`autocomp run --dry-run`, and the checks before the first
stage): what each stage costs in GPU-hours (costs), the GPU memory each process needs
(memory), host memory (host), disk (disk), the models and packages a run needs (weights),
a calibration measured on a GPU (calibrate), and the plan that prints them all (plan)."""
