"""d2l 1.0's PyTorch API on top of today's PyTorch: ``from d2lite import d2l``.

The book's own API (``import d2lite as d2l``) is batch-first and validates its inputs. This
module instead follows the layouts and signatures of the ``d2l.torch`` module of *Dive into
Deep Learning* 1.0, so that code written against it (for example the PyTorch cells of its
attention chapter) runs with only the import line changed: ``from d2l import torch as d2l``
becomes ``from d2lite import d2l``. It is written from the published API (names, signatures,
tensor layouts), not copied from d2l.

Each name whose behaviour or layout differs from the book's own API carries a
``__d2l_diff__ = {"ko": ..., "en": ...}`` note; the appendix page ``d2l_compat`` lists them.

The names live in modules by job: ``aliases`` (tensor, plot and device helpers), ``framework``
(d2l 1.0's training framework), ``encoder_decoder``, ``attention_models``,
``vision_transformer`` and ``datasets`` (downloads and data modules); this package re-exports
them all under their d2l names.
"""

from __future__ import annotations

# Attributes of the former single-file module, kept so that d2l.torch, d2l.np, ... still work.
import collections  # noqa: F401
import hashlib  # noqa: F401
import importlib  # noqa: F401
import inspect  # noqa: F401
import math  # noqa: F401
import os  # noqa: F401
import sys  # noqa: F401
import urllib.error  # noqa: F401
import urllib.request  # noqa: F401
import zipfile  # noqa: F401
from pathlib import Path  # noqa: F401

import numpy as np  # noqa: F401
import torch  # noqa: F401
from torch import nn  # noqa: F401
from torch.nn import functional as F  # noqa: F401

from .aliases import (
    Timer, abs, arange, argmax, astype, check_len, check_shape, concat, cos, cpu, exp, eye,
    float32, gpu, int32, int64, linspace, matmul, normal, num_gpus, numpy, ones, plot, plt,
    rand, randn, reduce_mean, reduce_sum, reshape, set_axes, set_figsize, show_heatmaps, sin,
    size, stack, tanh, tensor, try_all_gpus, try_gpu, use_svg_display, zeros,
)
from .framework import (
    Classifier, DataModule, GRU, HyperParameters, Module, ProgressBoard, RNN, Trainer, Vocab,
    add_to_class, init_seq2seq,
)
from .encoder_decoder import (
    AttentionDecoder, Decoder, Encoder, EncoderDecoder, Seq2Seq, Seq2SeqDecoder,
    Seq2SeqEncoder, bleu,
)
from .attention_models import (
    AddNorm, AdditiveAttention, DotProductAttention, MultiHeadAttention, PositionWiseFFN,
    PositionalEncoding, Seq2SeqAttentionDecoder, TransformerDecoder, TransformerDecoderBlock,
    TransformerEncoder, TransformerEncoderBlock, masked_softmax,
)
from .vision_transformer import PatchEmbedding, ViT, ViTBlock, ViTMLP
from .datasets import (  # DATA_URL and DATA_HUB: d2l's data registry, outside __all__
    DATA_HUB, DATA_URL, FashionMNIST, MTFraEng, download, extract,  # noqa: F401
)

__all__ = [
    # tensor and plot helpers
    "tensor", "ones", "zeros", "arange", "reshape", "normal", "rand", "randn", "eye", "exp",
    "abs", "sin", "cos", "tanh", "matmul", "reduce_sum", "reduce_mean", "astype", "float32",
    "int32", "int64", "concat", "stack", "numpy", "size", "argmax", "linspace", "plt",
    "use_svg_display", "set_figsize", "set_axes", "plot", "show_heatmaps", "check_shape",
    "check_len", "cpu", "gpu", "num_gpus", "try_gpu", "try_all_gpus", "Timer",
    # framework
    "HyperParameters", "ProgressBoard", "Module", "DataModule", "Trainer", "Classifier",
    "add_to_class", "init_seq2seq", "RNN", "GRU", "Vocab",
    # encoder-decoder
    "Encoder", "Decoder", "AttentionDecoder", "EncoderDecoder", "Seq2SeqEncoder",
    "Seq2SeqDecoder", "Seq2SeqAttentionDecoder", "Seq2Seq", "bleu",
    # attention
    "masked_softmax", "DotProductAttention", "AdditiveAttention", "MultiHeadAttention",
    "PositionalEncoding", "PositionWiseFFN", "AddNorm", "TransformerEncoderBlock",
    "TransformerEncoder", "TransformerDecoderBlock", "TransformerDecoder",
    "PatchEmbedding", "ViTMLP", "ViTBlock", "ViT",
    # data
    "download", "extract", "MTFraEng", "FashionMNIST",
]  # fmt: skip


#: For each name that ``import d2lite as d2l`` shares with d2l and whose docstring says (in
#: English) how it differs, the same point in Korean. The appendix page ``d2l_compat`` shows
#: the Korean note in Korean mode and the docstring's sentences in English mode, and asserts
#: that no such name lacks its Korean note.
BOOK_DIFFS_KO: dict[str, str] = {
    "AttentionDecoder": "마지막 순전파의 어텐션 가중치를 보관합니다. predict_seq2seq는 "
                        "source_attention_weights(배치, 스텝, 원문 위치, 행의 합 1)를 "
                        "읽고, d2l처럼 스텝마다 (배치, 1, 원문 위치) 텐서를 담은 "
                        "리스트도 받습니다.",
    "AddNorm": "d2l과 달리 X와 Y의 모양이 다르면 브로드캐스팅하지 않고 ValueError를 냅니다.",
    "AdditiveAttention": "query_size와 key_size를 주면 보통의 Linear로 만들고, 빼면 d2l처럼 "
                         "첫 호출 때 입력 크기를 정합니다(nn.LazyLinear).",
    "LSTMScratch": "d2l과 달리 출력을 리스트가 아닌 텐서 하나로 쌓아 돌려주고, forget_bias와 "
                   "copy_from을 더했습니다.",
    "MaskedSoftmaxCELoss": "d2l 0.17판의 시퀀스별 손실입니다: (배치, 스텝, 어휘), (배치, 스텝), "
                           "(배치,) → (배치,).",
    "MultiHeadAttention": "d2l은 늘 nn.LazyLinear를 쓰지만, 여기서는 query_size, key_size, "
                          "value_size를 주면 입력 크기를 확인하는 보통의 nn.Linear를 씁니다.",
    "PatchEmbedding": "in_channels=None이면 d2l처럼 첫 호출 때 채널 수를 정합니다. d2l과 달리 "
                      "패치 크기로 나누어떨어지지 않는 이미지 크기는 ValueError입니다.",
    "PositionWiseFFN": "d2l은 입력 크기를 늘 추론하지만(nn.LazyLinear), 여기서는 num_inputs로 "
                       "보통의 nn.Linear를 만들 수 있고 정수 입력은 ValueError입니다.",
    "PositionalEncoding": "d2l과 달리 P는 버퍼여서 .to(device)와 함께 옮겨지고, float64로 계산한 "
                          "뒤 반올림하며, 홀수 num_hiddens는 거절합니다.",
    "RNNScratch": "d2l은 파이썬 리스트를 돌려주지만, 여기서는 출력을 텐서 하나로 쌓습니다.",
    "Seq2Seq": "d2l의 Seq2Seq와 달리 손실, 옵티마이저, 패딩 번호를 갖지 않습니다. 패딩을 가리는 "
               "train_seq2seq로 훈련합니다.",
    "Seq2SeqAttentionDecoder": "attention_weights는 마지막 순전파의 가중치 (배치, 스텝, 원문 "
                               "스텝)으로, d2l의 리스트와 달리 텐서 하나입니다.",
    "Seq2SeqDecoder": "d2l과 달리 배치 축이 먼저이고, 문맥은 인코더 맨 위 층의 마지막 상태입니다.",
    "Seq2SeqEncoder": "d2l과 달리 배치 축이 먼저이고, 패딩은 GRU에 들어가지 않습니다.",
    "TransformerDecoder": "d2l은 한 토큰씩 디코딩할 때마다 위치 0의 인코딩을 더하지만, 여기서는 "
                          "캐시된 토큰 수만큼 위치를 옮깁니다. attention_weights는 텐서 "
                          "두 개입니다.",
    "TransformerDecoderBlock": "d2l은 훈련 모드에서만 인과 마스크를 쓰지만, 여기서는 평가 "
                               "모드에서도 "
                               "마스크가 유지되어 목표 문장 전체를 한 번에 다시 돌릴 수 있습니다.",
    "TransformerEncoder": "d2l의 attention_weights는 블록마다 (배치×헤드, 쿼리, 키) 텐서를 담은 "
                          "리스트이지만, 여기서는 (배치, 블록, 헤드, 쿼리, 키) 텐서 하나입니다.",
    "TransformerEncoderBlock": "d2l과 달리 블록이 attention_weights를 (배치, 헤드, 쿼리, 키)로 "
                               "보여 주고, [1, 스텝] 밖의 유효 길이는 ValueError입니다.",
    "ViT": "d2l의 ViT(d2l.Classifier)와 달리 평범한 nn.Module이고 d2l.train_classifier로 "
           "훈련합니다. lr은 저장만 하고, in_channels로 크기를 바로 정할 수 있습니다.",
    "ViTBlock": "d2l과 달리 마지막 호출의 어텐션 가중치를 (배치, 헤드, 스텝, 스텝) 모양으로 "
                "attention_weights에 남깁니다.",
    "ViTMLP": "num_inputs=None이면 d2l처럼 첫 호출 때 입력 폭을 정하고, d2l과 달리 num_inputs로 "
              "고정할 수도 있습니다.",
    "Vocab": "d2l과 달리 특수 토큰 네 개가 늘 앞에 오고(<pad>가 0), to_tokens는 범위 밖 번호를 "
             "거절합니다.",
    "bleu": "공식은 d2l과 같지만 토큰 리스트도 받고, n 단어보다 짧은 예측은 0으로 나누는 대신 "
            "0점입니다(d2l은 한 토큰 예측 'a'와 정답 'a b'에 0.368을 줍니다).",
    "grad_clipping": "d2l과 달리 클리핑 전의 노름을 돌려주고, 양수가 아닌 theta는 "
                     "ValueError입니다.",
    "plot": "d2l처럼 아무것도 돌려주지 않아 셀 끝에 써도 <Axes>가 찍히지 않습니다. 축을 더 "
            "꾸미려면 먼저 fig, ax = plt.subplots()로 만들고 axes=ax로 넘깁니다.",
    "predict_seq2seq": "d2l과 달리 결과 문장을 다시 이어 붙이고(한국어 조사 포함) 가중치를 텐서 "
                       "하나로 돌려줍니다.",
    "show_heatmaps": "figsize는 d2l처럼 그림 전체 크기입니다. 기본값 shared_scale=True는 모든 "
                     "패널에 색 범위 하나와 색 막대 하나를 쓰고, False이면 d2l처럼 패널마다 "
                     "범위와 색 막대가 따로입니다. 아무것도 돌려주지 않습니다.",
    "truncate_pad": "d2l과 같고, num_steps가 양수가 아니면 ValueError를 냅니다.",
}
