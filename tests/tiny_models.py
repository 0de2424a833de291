"""Tiny random models built from configs, saved to a folder and loaded back through the
real loading code (open_clip local-dir, transformers from_pretrained). No downloads."""

from __future__ import annotations

import json
from pathlib import Path

SENTENCES = ["a red cube and a blue sphere on a white background",
             "a green cone under a yellow torus, which is above a prism",
             "in a sunlit kitchen there is a small capsule to the left of a cylinder",
             "the photo shows a quiet attic where a pyramid is larger than a sphere"]


def tiny_open_clip(folder: Path) -> Path:
    """A 2-layer CLIP saved as open_clip_config.json + open_clip_model.safetensors."""
    import open_clip
    import torch
    from safetensors.torch import save_file

    cfg = {"embed_dim": 32,
           "vision_cfg": {"image_size": 32, "layers": 2, "width": 64, "head_width": 32,
                          "patch_size": 8},
           "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2,
                        "layers": 2}}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tiny-ViT.json").write_text(json.dumps(cfg))
    open_clip.add_model_config(folder)
    torch.manual_seed(0)
    model, _, _ = open_clip.create_model_and_transforms("tiny-ViT", pretrained=None)
    weights = folder / "weights"
    weights.mkdir(exist_ok=True)
    (weights / "open_clip_config.json").write_text(json.dumps({
        "model_cfg": cfg, "preprocess_cfg": {"mean": [0.48, 0.46, 0.41],
                                             "std": [0.27, 0.26, 0.28]}}))
    save_file({k: v.contiguous() for k, v in model.state_dict().items()},
              str(weights / "open_clip_model.safetensors"))
    return weights


def _bpe(vocab_size=400):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tk = Tokenizer(models.BPE(unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size,
                                  special_tokens=["<pad>", "<unk>", "<s>", "</s>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tk.train_from_iterator(SENTENCES * 4, trainer)
    return tk


def tiny_hf_clip(folder: Path) -> Path:
    import torch
    import transformers as T

    folder.mkdir(parents=True, exist_ok=True)
    from tokenizers import pre_tokenizers

    chars = sorted(pre_tokenizers.ByteLevel.alphabet())  # the 256 byte symbols
    vocab = {c: i for i, c in enumerate(chars)}
    vocab.update({c + "</w>": len(chars) + i for i, c in enumerate(chars)})
    vocab["<|startoftext|>"], vocab["<|endoftext|>"] = len(vocab), len(vocab) + 1
    tok = T.CLIPTokenizer(vocab=vocab, merges=[])
    eos = vocab["<|endoftext|>"]
    cfg = T.CLIPConfig(
        text_config=dict(vocab_size=len(vocab), hidden_size=32, intermediate_size=37,
                         num_hidden_layers=2, num_attention_heads=2,
                         max_position_embeddings=77, bos_token_id=eos - 1, eos_token_id=eos,
                         pad_token_id=eos),
        vision_config=dict(image_size=32, patch_size=8, hidden_size=32, intermediate_size=37,
                           num_hidden_layers=2, num_attention_heads=2),
        projection_dim=16)
    torch.manual_seed(0)
    T.CLIPModel(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    T.CLIPImageProcessor(size={"shortest_edge": 32},
                         crop_size={"height": 32, "width": 32}).save_pretrained(folder)
    return folder


def tiny_hf_siglip(folder: Path) -> Path:
    import torch
    import transformers as T

    folder.mkdir(parents=True, exist_ok=True)
    bpe = _bpe()
    tok = T.PreTrainedTokenizerFast(tokenizer_object=bpe, pad_token="<pad>",
                                    unk_token="<unk>", eos_token="</s>")
    ids = bpe.get_vocab()
    cfg = T.SiglipConfig(
        text_config=dict(vocab_size=bpe.get_vocab_size(), hidden_size=32, intermediate_size=37,
                         num_hidden_layers=2, num_attention_heads=2, max_position_embeddings=64,
                         pad_token_id=ids["<pad>"], bos_token_id=ids["<s>"],
                         eos_token_id=ids["</s>"]),
        vision_config=dict(image_size=32, patch_size=8, hidden_size=32, intermediate_size=37,
                           num_hidden_layers=2, num_attention_heads=2))
    torch.manual_seed(0)
    T.SiglipModel(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    T.SiglipImageProcessor(size={"height": 32, "width": 32}).save_pretrained(folder)
    return folder


def tiny_causal_lm(folder: Path) -> Path:
    import torch
    import transformers as T

    folder.mkdir(parents=True, exist_ok=True)
    bpe = _bpe()
    ids = bpe.get_vocab()
    tok = T.PreTrainedTokenizerFast(tokenizer_object=bpe, pad_token="<pad>", unk_token="<unk>",
                                    bos_token="<s>", eos_token="</s>")
    cfg = T.GPT2Config(vocab_size=bpe.get_vocab_size(), n_positions=96, n_embd=32, n_layer=2,
                       n_head=2, bos_token_id=ids["<s>"], eos_token_id=ids["</s>"])
    torch.manual_seed(0)
    T.GPT2LMHeadModel(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder
