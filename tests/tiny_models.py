"""Tiny random models built from configs, saved to a folder and loaded back through the
real loading code (open_clip local-dir, transformers from_pretrained). No downloads."""

from __future__ import annotations

import json
from pathlib import Path

SENTENCES = ["a red cube and a blue sphere on a white background",
             "a green cone under a yellow torus, which is above a prism",
             "in a sunlit kitchen there is a small capsule to the left of a cylinder",
             "the photo shows a quiet attic where a pyramid is larger than a sphere"]


def tiny_open_clip(folder: Path, context_length: int = 77, seed: int = 0) -> Path:
    """A 2-layer CLIP saved as open_clip_config.json + open_clip_model.safetensors (a short
    `context_length` truncates captions, so captions alike in their first words tie;
    `seed`: its random weights)."""
    import open_clip
    import torch
    from safetensors.torch import save_file

    cfg = {"embed_dim": 32,
           "vision_cfg": {"image_size": 32, "layers": 2, "width": 64, "head_width": 32,
                          "patch_size": 8},
           "text_cfg": {"context_length": context_length, "vocab_size": 49408, "width": 32,
                        "heads": 2, "layers": 2}}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tiny-ViT.json").write_text(json.dumps(cfg))
    open_clip.add_model_config(folder)
    torch.manual_seed(seed)
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
    import transformers as T

    folder.mkdir(parents=True, exist_ok=True)
    bpe = _bpe()
    tok = T.PreTrainedTokenizerFast(tokenizer_object=bpe, pad_token="<pad>",
                                    unk_token="<unk>", eos_token="</s>")
    ids = bpe.get_vocab()
    return _save_siglip(folder, tok, bpe.get_vocab_size(), pad_token_id=ids["<pad>"],
                        bos_token_id=ids["<s>"], eos_token_id=ids["</s>"])


def _save_siglip(folder: Path, tok, vocab_size: int, **special) -> Path:
    """A 2-layer SigLIP with `tok`, its image processor at 32 px, saved to `folder`."""
    import torch
    import transformers as T

    cfg = T.SiglipConfig(
        text_config=dict(vocab_size=vocab_size, hidden_size=32, intermediate_size=37,
                         num_hidden_layers=2, num_attention_heads=2, max_position_embeddings=64,
                         **special),
        vision_config=dict(image_size=32, patch_size=8, hidden_size=32, intermediate_size=37,
                           num_hidden_layers=2, num_attention_heads=2))
    torch.manual_seed(0)
    T.SiglipModel(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    T.SiglipImageProcessor(size={"height": 32, "width": 32}).save_pretrained(folder)
    return folder


def tiny_siglip_v1(folder: Path) -> Path:
    """SigLIP v1 as Google ships it: a SentencePiece model (spiece.model) read by
    SiglipTokenizer, which needs the sentencepiece package."""
    import io

    import sentencepiece as spm
    import transformers as T

    folder.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(SENTENCES * 8), model_writer=buf,
                                   vocab_size=80, model_type="unigram", unk_id=0, pad_id=1,
                                   eos_id=2, bos_id=-1, hard_vocab_limit=False,
                                   minloglevel=2)
    (folder / "spiece.model").write_bytes(buf.getvalue())
    tok = T.SiglipTokenizer(vocab_file=str(folder / "spiece.model"), model_max_length=64)
    return _save_siglip(folder, tok, tok.vocab_size, pad_token_id=1, eos_token_id=2,
                        bos_token_id=None)


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


def _clip_vocab():
    from tokenizers import pre_tokenizers

    chars = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {c: i for i, c in enumerate(chars)}
    vocab.update({c + "</w>": len(chars) + i for i, c in enumerate(chars)})
    vocab["<|startoftext|>"], vocab["<|endoftext|>"] = len(vocab), len(vocab) + 1
    return vocab


def tiny_sd3(folder: Path) -> Path:
    """A 2-layer SD3 pipeline (two CLIP text encoders, no T5) for 32-64 px images."""
    import torch
    import transformers as T
    from diffusers import (
        AutoencoderKL,
        FlowMatchEulerDiscreteScheduler,
        SD3Transformer2DModel,
        StableDiffusion3Pipeline,
    )

    vocab = _clip_vocab()
    eos = vocab["<|endoftext|>"]

    def tokenizer():
        tok = T.CLIPTokenizer(vocab=vocab, merges=[])
        tok.model_max_length = 77
        return tok

    def encoder(seed):
        torch.manual_seed(seed)
        return T.CLIPTextModelWithProjection(T.CLIPTextConfig(
            vocab_size=len(vocab), hidden_size=32, intermediate_size=37, num_hidden_layers=2,
            num_attention_heads=2, max_position_embeddings=77, projection_dim=32,
            bos_token_id=eos - 1, eos_token_id=eos, pad_token_id=eos))

    torch.manual_seed(0)
    transformer = SD3Transformer2DModel(
        sample_size=32, patch_size=2, in_channels=4, num_layers=2, attention_head_dim=8,
        num_attention_heads=2, joint_attention_dim=64, caption_projection_dim=16,
        pooled_projection_dim=64, out_channels=4)
    vae = AutoencoderKL(in_channels=3, out_channels=3, latent_channels=4,
                        down_block_types=["DownEncoderBlock2D"] * 2,
                        up_block_types=["UpDecoderBlock2D"] * 2, block_out_channels=[8, 16],
                        layers_per_block=1, norm_num_groups=8, sample_size=32,
                        shift_factor=0.0609, scaling_factor=1.5035)
    pipe = StableDiffusion3Pipeline(
        transformer=transformer, vae=vae, scheduler=FlowMatchEulerDiscreteScheduler(),
        text_encoder=encoder(1), tokenizer=tokenizer(), text_encoder_2=encoder(2),
        tokenizer_2=tokenizer(), text_encoder_3=None, tokenizer_3=None)
    pipe.save_pretrained(folder)
    return folder



def tiny_flux(folder: Path) -> Path:
    """A 1 + 1 block FLUX pipeline (CLIP and a T5 encoder, guidance embedded) for 32 px
    images: FLUX.1's classes through diffusers' FluxPipeline."""
    import torch
    import transformers as T
    from diffusers import (
        AutoencoderKL,
        FlowMatchEulerDiscreteScheduler,
        FluxPipeline,
        FluxTransformer2DModel,
    )

    vocab = _clip_vocab()
    eos = vocab["<|endoftext|>"]
    clip_tok = T.CLIPTokenizer(vocab=vocab, merges=[])
    clip_tok.model_max_length = 77
    torch.manual_seed(1)
    clip = T.CLIPTextModel(T.CLIPTextConfig(
        vocab_size=len(vocab), hidden_size=32, intermediate_size=37, num_hidden_layers=2,
        num_attention_heads=2, max_position_embeddings=77, projection_dim=32,
        bos_token_id=eos - 1, eos_token_id=eos, pad_token_id=eos))
    tk, _ = _byte_bpe(["<pad>", "</s>", "<unk>"], "<unk>")
    t5_tok = T.PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", eos_token="</s>",
                                       unk_token="<unk>")
    t5_tok.model_max_length = 32
    torch.manual_seed(2)
    t5 = T.T5EncoderModel(T.T5Config(
        vocab_size=len(t5_tok), d_model=32, d_kv=8, d_ff=37, num_layers=2, num_heads=2,
        pad_token_id=t5_tok.pad_token_id, eos_token_id=t5_tok.eos_token_id))
    torch.manual_seed(0)
    transformer = FluxTransformer2DModel(
        patch_size=1, in_channels=16, num_layers=1, num_single_layers=1, attention_head_dim=8,
        num_attention_heads=2, joint_attention_dim=32, pooled_projection_dim=32,
        guidance_embeds=True, axes_dims_rope=(2, 2, 4))
    vae = AutoencoderKL(in_channels=3, out_channels=3, latent_channels=4,
                        down_block_types=["DownEncoderBlock2D"] * 2,
                        up_block_types=["UpDecoderBlock2D"] * 2, block_out_channels=[8, 16],
                        layers_per_block=1, norm_num_groups=8, sample_size=32,
                        shift_factor=0.0609, scaling_factor=1.5035)
    FluxPipeline(scheduler=FlowMatchEulerDiscreteScheduler(), vae=vae, text_encoder=clip,
                 tokenizer=clip_tok, text_encoder_2=t5, tokenizer_2=t5_tok,
                 transformer=transformer).save_pretrained(folder)
    return folder

CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<start_of_turn>"
    "{{ 'model' if m['role'] == 'assistant' else 'user' }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<start_of_image>{% else %}{{ c['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<end_of_turn>\n{% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}")
GEMMA_SPECIAL = ["<pad>", "<unk>", "<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>",
                 "<start_of_image>", "<end_of_image>", "<image_soft_token>"]


def _byte_bpe(special: list[str], unk: str, vocab_size: int = 400):
    """A byte-level BPE trained on SENTENCES with `special` tokens: (tokenizer, vocab)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tk = Tokenizer(models.BPE(unk_token=unk))
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    tk.train_from_iterator(SENTENCES * 4, trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=special,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return tk, tk.get_vocab()


def _gemma_tokenizer():
    import transformers as T

    tk, _ = _byte_bpe(GEMMA_SPECIAL, "<unk>")
    tok = T.PreTrainedTokenizerFast(
        tokenizer_object=tk, pad_token="<pad>", unk_token="<unk>", bos_token="<bos>",
        eos_token="<eos>", chat_template=CHAT_TEMPLATE,
        extra_special_tokens={"boi_token": "<start_of_image>", "eoi_token": "<end_of_image>",
                              "image_token": "<image_soft_token>"})
    return tok, tk.get_vocab()


def _gemma_text_config(ids, vocab_size):
    return dict(vocab_size=vocab_size, hidden_size=32, intermediate_size=37,
                num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, head_dim=16,
                max_position_embeddings=512, sliding_window=64, pad_token_id=ids["<pad>"],
                bos_token_id=ids["<bos>"], eos_token_id=ids["<eos>"])


def tiny_gemma_lm(folder: Path) -> Path:
    """A 2-layer Gemma-3 text model with a BPE tokenizer and a chat template."""
    import torch
    import transformers as T

    tok, ids = _gemma_tokenizer()
    torch.manual_seed(0)
    T.Gemma3ForCausalLM(T.Gemma3TextConfig(**_gemma_text_config(ids, len(ids)))
                        ).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def tiny_gemma_vlm(folder: Path) -> Path:
    """A 2-layer Gemma-3 image-text-to-text model (4 image tokens, 32 px images)."""
    import torch
    import transformers as T

    tok, ids = _gemma_tokenizer()
    vision = T.SiglipVisionConfig(image_size=32, patch_size=8, hidden_size=32,
                                  intermediate_size=37, num_hidden_layers=2,
                                  num_attention_heads=2)
    cfg = T.Gemma3Config(text_config=_gemma_text_config(ids, len(ids)),
                         vision_config=vision.to_dict(), mm_tokens_per_image=4,
                         boi_token_index=ids["<start_of_image>"],
                         eoi_token_index=ids["<end_of_image>"],
                         image_token_index=ids["<image_soft_token>"])
    torch.manual_seed(0)
    T.Gemma3ForConditionalGeneration(cfg).save_pretrained(folder)
    T.Gemma3Processor(image_processor=T.Gemma3ImageProcessor(size={"height": 32, "width": 32}),
                      tokenizer=tok, image_seq_length=4,
                      chat_template=CHAT_TEMPLATE).save_pretrained(folder)
    return folder


LLAVA_TEMPLATE = (
    "{% for m in messages %}{{ 'USER: ' if m['role'] == 'user' else 'ASSISTANT: ' }}"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<image>\n{% else %}{{ c['text'] }}{% endif %}{% endfor %}"
    "{% endif %}\n{% endfor %}{% if add_generation_prompt %}ASSISTANT:{% endif %}")


def tiny_llava_vlm(folder: Path) -> Path:
    """A 2-layer LLaVA (CLIP vision tower, Llama text model): a second image-text-to-text
    family beside Gemma-3, with its own processor and chat template."""
    import torch
    import transformers as T

    tk, ids = _byte_bpe(["<pad>", "<unk>", "<s>", "</s>", "<image>"], "<unk>", 300)
    tok = T.PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", unk_token="<unk>",
                                    bos_token="<s>", eos_token="</s>",
                                    chat_template=LLAVA_TEMPLATE,
                                    extra_special_tokens={"image_token": "<image>"})
    vision = T.CLIPVisionConfig(image_size=32, patch_size=8, hidden_size=32,
                                intermediate_size=37, num_hidden_layers=2,
                                num_attention_heads=2, projection_dim=16)
    text = T.LlamaConfig(vocab_size=len(ids), hidden_size=32, intermediate_size=37,
                         num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
                         max_position_embeddings=2048, pad_token_id=ids["<pad>"],
                         bos_token_id=ids["<s>"], eos_token_id=ids["</s>"])
    cfg = T.LlavaConfig(vision_config=vision.to_dict(), text_config=text.to_dict(),
                        image_token_index=ids["<image>"], vision_feature_layer=-1,
                        vision_feature_select_strategy="default")
    torch.manual_seed(0)
    T.LlavaForConditionalGeneration(cfg).save_pretrained(folder)
    T.LlavaProcessor(image_processor=T.CLIPImageProcessor(
        size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}),
        tokenizer=tok, patch_size=8, vision_feature_select_strategy="default",
        image_token="<image>", chat_template=LLAVA_TEMPLATE,
        num_additional_image_tokens=1).save_pretrained(folder)
    return folder


def grounding_dino_config(vocab_size: int):
    """A 1+2-layer GroundingDINO on a 4-stage Swin at 64 px."""
    import transformers as T

    text = T.BertConfig(vocab_size=vocab_size, hidden_size=32, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=37, max_position_embeddings=64)
    backbone = T.SwinConfig(image_size=64, patch_size=4, embed_dim=16, depths=[1, 1, 1, 1],
                            num_heads=[1, 1, 1, 1], window_size=4,
                            out_features=["stage2", "stage3", "stage4"], out_indices=[2, 3, 4])
    return T.GroundingDinoConfig(
        backbone_config=backbone, text_config=text, d_model=32, encoder_layers=1,
        decoder_layers=2, encoder_attention_heads=2, decoder_attention_heads=2,
        encoder_ffn_dim=37, decoder_ffn_dim=37, num_queries=10, num_feature_levels=3,
        max_text_len=32, encoder_n_points=2, decoder_n_points=2, use_timm_backbone=False)


def tiny_grounding_dino(folder: Path) -> Path:
    import torch
    import transformers as T

    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", "a", "pair", "of", "cube",
             "sphere", "pyramid", "cylinder", "cone", "torus", "prism", "capsule", "chair",
             "lamp", "gloves"]
    tok = T.BertTokenizer(vocab={w: i for i, w in enumerate(words)})
    torch.manual_seed(0)
    T.GroundingDinoForObjectDetection(grounding_dino_config(len(words))).save_pretrained(folder)
    T.GroundingDinoProcessor(
        image_processor=T.GroundingDinoImageProcessor(size={"shortest_edge": 64,
                                                            "longest_edge": 64}),
        tokenizer=tok).save_pretrained(folder)
    return folder


def sam2_config():
    """A SAM2 with a 4-stage Hiera of widths 8-64 at 64 px."""
    import transformers as T

    backbone = T.Sam2HieraDetConfig(
        hidden_size=8, num_attention_heads=1, image_size=[64, 64], patch_kernel_size=[7, 7],
        patch_stride=[4, 4], patch_padding=[3, 3], blocks_per_stage=[1, 2, 1, 1],
        embed_dim_per_stage=[8, 16, 32, 64], num_attention_heads_per_stage=[1, 1, 1, 1],
        window_size_per_stage=[2, 2, 2, 2], global_attention_blocks=[2],
        window_positional_embedding_background_size=[2, 2])
    return T.Sam2Config(
        vision_config=T.Sam2VisionConfig(backbone_config=backbone,
                                         backbone_channel_list=[64, 32, 16, 8],
                                         backbone_feature_sizes=[[16, 16], [8, 8], [4, 4]],
                                         fpn_hidden_size=32),
        prompt_encoder_config=T.Sam2PromptEncoderConfig(hidden_size=32, image_size=64,
                                                        patch_size=16),
        mask_decoder_config=T.Sam2MaskDecoderConfig(hidden_size=32, mlp_dim=64,
                                                    num_attention_heads=2,
                                                    iou_head_hidden_dim=32))


def tiny_sam2(folder: Path) -> Path:
    import torch
    import transformers as T

    torch.manual_seed(0)
    T.Sam2Model(sam2_config()).save_pretrained(folder)
    T.Sam2Processor(image_processor=T.Sam2ImageProcessorFast(size={"height": 64, "width": 64})
                    ).save_pretrained(folder)
    return folder


def tiny_backends(folder: Path) -> dict:
    """Every real backend's tiny model, built once: name -> folder."""
    return {"sd3": tiny_sd3(folder / "sd3"), "gemma_lm": tiny_gemma_lm(folder / "gemma_lm"),
            "gemma_vlm": tiny_gemma_vlm(folder / "gemma_vlm"),
            "dino": tiny_grounding_dino(folder / "dino"), "sam2": tiny_sam2(folder / "sam2")}


QWEN_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% else %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
QWEN_SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>",
                "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]


def tiny_qwen2_vl(folder: Path) -> Path:
    """A 2-layer Qwen2-VL: flat image patches with a grid per image and multimodal rotary
    positions, the third image-text-to-text layout beside Gemma-3 and LLaVA."""
    import torch
    import transformers as T

    tk, ids = _byte_bpe(QWEN_SPECIAL, "<|endoftext|>")
    tok = T.PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<|endoftext|>",
                                    eos_token="<|im_end|>", chat_template=QWEN_TEMPLATE,
                                    extra_special_tokens={"image_token": "<|image_pad|>",
                                                          "video_token": "<|video_pad|>"})
    text = dict(vocab_size=len(ids), hidden_size=32, intermediate_size=37,
                num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
                max_position_embeddings=2048, rope_scaling={"type": "mrope",
                                                            "mrope_section": [2, 3, 3]},
                pad_token_id=ids["<|endoftext|>"], bos_token_id=ids["<|endoftext|>"],
                eos_token_id=ids["<|im_end|>"])
    vision = dict(depth=2, embed_dim=32, hidden_size=32, num_heads=2, mlp_ratio=2,
                  patch_size=8, spatial_merge_size=2, temporal_patch_size=2, in_channels=3)
    cfg = T.Qwen2VLConfig(text_config=text, vision_config=vision,
                          image_token_id=ids["<|image_pad|>"],
                          video_token_id=ids["<|video_pad|>"],
                          vision_start_token_id=ids["<|vision_start|>"],
                          vision_end_token_id=ids["<|vision_end|>"])
    torch.manual_seed(0)
    T.Qwen2VLForConditionalGeneration(cfg).save_pretrained(folder)
    image = T.Qwen2VLImageProcessor(patch_size=8, merge_size=2, temporal_patch_size=2,
                                    min_pixels=32 * 32, max_pixels=32 * 32)
    video = T.Qwen2VLVideoProcessor(patch_size=8, merge_size=2, temporal_patch_size=2)
    T.Qwen2VLProcessor(image_processor=image, tokenizer=tok, video_processor=video,
                       chat_template=QWEN_TEMPLATE).save_pretrained(folder)
    return folder
