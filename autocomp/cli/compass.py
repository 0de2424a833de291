"""`autocomp compass build|eval|report|perplexity`: COMPASS on Visual Genome and on runs."""

from __future__ import annotations

from pathlib import Path

import click

from autocomp.cli import options


@click.group("compass")
def compass():
    """Composed vs decomposed captions and skill load (COMPASS), on VG or a synthetic run."""


@compass.command("build")
@click.argument("run_dir", required=False, type=click.Path(path_type=Path))
@click.option("--vg", "vg_dir", type=click.Path(path_type=Path), default=None,
              help="A Visual Genome folder (scene_graphs.json, attributes.json, ...), "
                   "instead of RUN_DIR.")
@click.option("--images", "images_dir", type=click.Path(path_type=Path), default=None,
              help="With --vg: the folder of the images (<image_id>.jpg).")
@options.output(required=True, help="The COMPASS set's folder.")
@click.option("--limit", type=click.IntRange(min=1), default=None,
              help="With --vg: the first N images (the paper uses 5K).")
@click.option("--image-ids", type=click.Path(path_type=Path, exists=True), default=None,
              help="With --vg: a file of image ids, one per line.")
@click.option("--seed", type=options.JSON_INT, default=0, show_default=True)
@click.option("--similarity", default="default", show_default=True,
              help="Sentence-embedding model for the negative filter (id or folder), "
                   "'default' (all-MiniLM-L6-v2, offline) or 'none'.")
@click.option("--filter-on", "scope", type=click.Choice(["primitive", "sentence", "caption"]),
              default="primitive", show_default=True,
              help="What the filter compares with the original: the edited primitive's "
                   "decomposed rendering (the same test as its decomposed pair), the "
                   "sentences the edit changed (the whole caption when it is one sentence), "
                   "or the whole caption (the paper's rule word for word; on multi-sentence "
                   "template captions it rejects nearly every relation negative at N >= 6).")
@click.option("--cache", "cache_dir", type=click.Path(path_type=Path), default=None,
              help="Embedding cache folder for the filter's sentences (default: "
                   "~/.cache/autocomp/sentences, shared by every build: a rebuild into a new "
                   "output embeds nothing twice).")
@options.device
@click.option("--writer", default="template", show_default=True,
              help="Caption writer: template, or an LLM writer (transformers, openai) with "
                   "the few-shot prompt of prompts/compass_caption_*.txt.")
@click.option("--writer-option", "writer_options", multiple=True, metavar="KEY=VALUE",
              help="An option of the writer (e.g. model=google/gemma-3-12b-it); repeatable.")
@click.option("--candidates", type=click.Choice(["auto", "wordnet", "vocabulary", "llm"]),
              default="auto", show_default=True,
              help="Replacement candidates: values of the dataset of the same WordNet "
                   "category that are not synonyms (VG synsets; auto with --vg), any other "
                   "value of the type (the task vocabularies; auto with --run), or proposed "
                   "by the LLM writer (cached per primitive, asked again when none "
                   "survives).")
@click.option("--wordnet", "wordnet_dir", type=click.Path(path_type=Path), default=None,
              help="A WordNet dict folder (default: nltk data, /usr/share/wordnet, or the "
                   "copy the compass extra installs).")
def build(run_dir, vg_dir, images_dir, output, limit, image_ids, seed, similarity, scope,
          cache_dir, device, writer, writer_options, candidates, wordnet_dir):
    """Build composed/decomposed and skill-targeted sets from RUN_DIR (a synthetic autocomp
    run: its validated images) or from Visual Genome (--vg)."""
    from autocomp.core.errors import AutocompError
    from autocomp.core.locks import holding

    if (vg_dir is None) == (run_dir is None):
        raise AutocompError("give exactly one of RUN_DIR or --vg DIR")
    click.echo(f"compass build: {run_dir or vg_dir} -> {output} (similarity: {similarity}); "
               "reading the images and their scene graphs", err=True)
    # a second build into the same output refuses at once instead of doing it all again
    with holding({str(output): output / ".build.lock"}, "compass build", "into this folder"):
        _build(run_dir, vg_dir, images_dir, output, limit, image_ids, seed, similarity, scope,
               cache_dir, device, writer, writer_options, candidates, wordnet_dir)


def _build(run_dir, vg_dir, images_dir, output, limit, image_ids, seed, similarity, scope,
           cache_dir, device, writer, writer_options, candidates, wordnet_dir):
    from autocomp.compass.build import build_run, build_vg
    from autocomp.compass.similarity import Similarity
    from autocomp.core.errors import AutocompError
    from autocomp.core.resources import cache_dir as shared_cache

    sim = None
    if similarity != "none":
        sim = Similarity(None if similarity == "default" else similarity, device,
                         cache_dir=cache_dir or shared_cache("sentences"))
        sim.start()  # loads while the run or Visual Genome is read
    llm = None
    if candidates == "llm" and writer == "template":
        raise AutocompError("--candidates llm needs an LLM --writer (transformers or openai)")
    if writer != "template":
        import yaml

        from autocomp.core.registry import resolve

        cls = resolve("writer", writer, field="--writer")
        opts = {}
        for item in writer_options:
            key, sep, value = item.partition("=")
            if not sep:
                raise AutocompError(f"--writer-option expects KEY=VALUE, got '{item}'")
            opts[key] = yaml.safe_load(value)
        llm = cls(**cls.check_options(opts, field="--writer-option"))
    try:
        if vg_dir is not None:
            ids = None
            if image_ids:
                ids = [int(x) for x in image_ids.read_text().split() if x.strip()]
            manifest = build_vg(vg_dir, images_dir or vg_dir / "images", output, limit, ids,
                                seed, sim, writer=llm, candidates=candidates,
                                wordnet=wordnet_dir, scope=scope)
        else:
            manifest = build_run(run_dir, output, seed, sim, writer=llm,
                                 candidates=candidates, wordnet=wordnet_dir, scope=scope)
    finally:
        if sim is not None:
            sim.close()
    click.echo(f"{manifest['images']} images -> {output}: "
               + ", ".join(f"{k} {v}" for k, v in manifest["counts"].items()))
    for reason, n in {**manifest.get("skipped", {}), **manifest["dropped"]}.items():
        click.echo(f"  left out {n:>6}  {reason}")
    from autocomp.compass.report import format_filter

    if manifest["filter"]:
        click.echo(format_filter(manifest))


@compass.command("eval")
@click.argument("compass_dir", type=click.Path(path_type=Path))
@click.option("--model", "models", multiple=True, required=True,
              help="FAMILY:NAME[@PRETRAINED], as for `autocomp eval`; repeatable.")
@options.output(help="Results folder (default: COMPASS_DIR/results). Another folder gets a "
                     "set.json naming the set: `compass report OUTPUT` reads both.")
@click.option("--benchmark", "patterns", multiple=True,
              help="Only the set's files matching a glob (composed, decomposed, skill-O, "
                   "skill-A, skill-R); repeatable.")
@click.option("--cache", "cache_dir", type=click.Path(path_type=Path), default=None,
              help="Embedding cache folder (default: COMPASS_DIR/cache); vectors are reused "
                   "across models' runs and sets.")
@options.device
@options.batch_size
@options.precision
@options.workers
@options.skip_existing
def eval_cmd(compass_dir, models, output, patterns, cache_dir, device, batch_size, precision,
             workers, skip_existing):
    """Score a COMPASS set (reuses the eval harness and its embedding cache)."""
    from autocomp.compass.evaluate import evaluate_compass

    evaluate_compass(compass_dir, list(models), cache_dir, device, batch_size, skip_existing,
                     output=output, patterns=patterns, precision=precision,
                     workers=workers)


@compass.command("report")
@click.argument("compass_dirs", nargs=-1, required=True, type=click.Path(path_type=Path))
@options.table_format
@options.figures("Also draw DIR/figures/integration.* and skill-load.* (PNG, PDF, SVG); for "
                 "a results folder of `compass eval --output`, into its figures/.")
@click.option("--models-file", type=click.Path(path_type=Path), default=None,
              help="Legend labels from a model-set YAML (default: a short form of the spec).")
@options.as_json
def report(compass_dirs, table_format, figure, models_file, as_json):
    """Integration gap and skill load, every set side by side (e.g. synthetic and VG). Each
    COMPASS_DIR is a set (its results/) or a results folder `compass eval --output` wrote."""
    from autocomp.cli.report import print_tables
    from autocomp.compass.report import figures as draw
    from autocomp.compass.report import tables

    print_tables(tables(list(compass_dirs)), [], table_format, as_json)
    if figure:
        labels = {}
        if models_file:
            from autocomp.eval.modelset import model_labels

            labels = model_labels(models_file)
        for path in draw(list(compass_dirs), labels):
            if path.suffix == ".png":
                click.echo(f"figure: {path} (and .pdf, .svg)", err=as_json)


@compass.command("perplexity")
@click.argument("compass_dir", type=click.Path(path_type=Path))
@click.option("--lm", required=True, help="A causal LM id or folder (GPT-2 in the paper).")
@options.device
def perplexity(compass_dir, lm, device):
    """Perplexity audit: rank-biserial r between positives and their hardest negatives."""
    from autocomp.compass.perplexity import Perplexity, audit
    from autocomp.compass.sets import check_set

    check_set(compass_dir)  # before the LM loads
    click.echo(f"... loading {lm}", err=True)
    for row in audit(compass_dir, Perplexity(lm, device)):
        click.echo(f"{row['file']:<10} {row['level']:<4} {row['captions']:>6} captions  "
                   f"r = {row['r']:+.3f}  {row['band']}")
