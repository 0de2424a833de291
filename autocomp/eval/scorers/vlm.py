"""vlm -- generative VLMs as test takers (Auto-Comp Table 7): the model sees the image and
the item's shuffled captions as lettered options, and names one.

  vlm:google/gemma-3-12b-it          any transformers image-text-to-text model (id or folder)
  vlm:transformers:/weights/qwen     the same, backend named
  vlm:openai:MODEL                   an OpenAI-compatible server ($OPENAI_BASE_URL); the
                                     image goes as a PNG data URL
  vlm:vllm:MODEL                     the transformers prompts through vLLM's offline engine
                                     (pip install 'autocomp[vllm]'; a GPU)
  vlm:MODEL@circular                 CircularEval (VLMEvalKit): every rotation of the
                                     options is asked; right only if right every time

Every cell's result carries `position_bias`: how often each option place was picked
against an even spread, with a chi-square test (choice.py).

Decoding is greedy and short (12 new tokens); only the generated tokens are read. Options,
subsampling (confusion: the positive + 49 negatives), retries and scoring are choice.py's.
"""

from __future__ import annotations

from autocomp.core.errors import AutocompError
from autocomp.core.families import contract_example
from autocomp.eval.scorers.choice import ChoiceScorer, letters, parse_letter

PROMPT = ("Which caption describes this image correctly? Exactly one option is right; the "
          "others change or rearrange its words.\n\n{options}\n\nAnswer with the letter of "
          "the correct option only.")
RETRY = "\n\nYour answer must be a single option letter from {first} to {last}, nothing else."
MAX_NEW_TOKENS = 12


def model_ref(family: str, name: str, pretrained: str | None) -> tuple[str, str]:
    """(backend, model) of "FAMILY:[transformers:|openai:|vllm:]MODEL"."""
    if pretrained:
        raise AutocompError(f"'{family}:{name}@{pretrained}': a {family} spec takes no @; "
                            f"write {family}:<transformers id or folder> or "
                            f"{family}:openai:<served model>")
    backend, sep, model = name.partition(":")
    if not sep or backend not in ("transformers", "openai", "vllm"):
        backend, model = "transformers", name
    if not model:
        raise AutocompError(f"'{family}:{name}' names no model: {family}:google/gemma-3-12b-it, "
                            f"{family}:/weights/my-vlm or {family}:openai:<served model>")
    return backend, model


@contract_example("vlm:openai:m")
class VLMChoice(ChoiceScorer):
    family = "vlm"
    needs_image = True
    prompt_template = PROMPT  # what results record (eval/provenance.py)
    default_batch_size = 8  # prompts with an image each, on a 12B model

    def __init__(self, name, pretrained=None, **kw):
        super().__init__(name, pretrained, **kw)
        if pretrained not in (None, "circular"):
            raise AutocompError(f"'vlm:{name}@{pretrained}': a vlm spec takes no @ but "
                                "@circular; write vlm:<transformers id or folder>, "
                                "vlm:openai:<served model>, or either with @circular")
        self.circular = pretrained == "circular"
        self.backend, self.model = model_ref("vlm", name, None)
        self._answerer = None

    def answerer(self):
        if self._answerer is None:
            if self.backend == "openai":
                from autocomp.validators.vqa import OpenAIAnswerer

                self._answerer = OpenAIAnswerer(self.model, max_tokens=MAX_NEW_TOKENS)
            elif self.backend == "vllm":
                from autocomp.validators.vqa_vllm import VLLMAnswerer

                self._answerer = VLLMAnswerer(self.model, MAX_NEW_TOKENS, device=self.device)
            else:
                from autocomp.validators.vqa import TransformersAnswerer

                self._answerer = TransformersAnswerer(self.model, MAX_NEW_TOKENS,
                                                      device=self.device)
        return self._answerer

    def _load(self):
        if self.backend == "transformers":
            self.answerer()._load()

    def labels(self, k):
        return letters(k)

    def parse(self, answer, k, options):
        return parse_letter(answer, k, options)

    def prompt(self, options, labels, retry):
        return PROMPT.format(options=options) + (
            RETRY.format(first=labels[0], last=labels[-1]) if retry else "")

    def ask(self, questions):
        if any(image is None for _, image, _, _ in questions):
            raise AutocompError("the vlm scorer needs the items' images")
        pairs = [(image, prompt) for _, image, prompt, _ in questions]
        if self.backend == "openai":  # concurrent requests, no batch to fill
            return self.answerer().ask(pairs)
        bs = self.batch_size
        return [a for i in range(0, len(pairs), bs) for a in self.answerer().ask(pairs[i:i + bs])]
