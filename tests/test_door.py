"""Check once, at the model's door: a model validates the *values* of its inputs (token ids,
valid lengths) once, and the layers inside trust them (issue 23).

Reading a tensor's value on the host (``bool(t)``, ``t.item()``, ``t.tolist()``) waits for the
device; on a GPU a check in every layer stalls it once per layer. A ``TorchFunctionMode`` counts
those reads during one forward pass.
"""

from __future__ import annotations

import pytest
import torch
from torch.overrides import TorchFunctionMode

import d2lite as d2l
from d2lite import checks

HOST_READS = {"item", "__bool__", "tolist", "__int__", "__float__", "__index__"}


class HostReads(TorchFunctionMode):
    """Counts the calls that read a tensor's value on the host."""

    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name in HOST_READS:
            self.names.append(name)
        return func(*args, **(kwargs or {}))


def host_reads(fn) -> int:
    with HostReads() as counter:
        fn()
    return len(counter.names)


def test_a_door_reads_all_its_values_at_once():
    X, lens = torch.tensor([[1, 2, 3], [4, 0, 0]]), torch.tensor([3, 1])

    def enter():
        with checks.door(tokens=[("X", X, 5)], lens=[("valid_lens", lens, 1, 3)]):
            assert checks.values_checked()

    assert host_reads(enter) == 1
    assert not checks.values_checked()


@pytest.mark.parametrize("tokens, lens, message", [
    ([[1, 7]], [2], r"X must hold token ids in \[0, 5\) \(the vocabulary's size\), got ids "
                    "from 1 to 7"),
    ([[-1, 2]], [2], r"got ids from -1 to 2"),
    ([[1, 2]], [3], r"valid_lens must lie in \[1, 2\], got \[3\]"),
    ([[1, 2]], [0], r"valid_lens must lie in \[1, 2\], got \[0\]"),
])
def test_a_door_names_what_is_out_of_range(tokens, lens, message):
    with pytest.raises(ValueError, match=message):
        with checks.token_door(torch.tensor(tokens), 5, torch.tensor(lens)):
            pass


def test_inside_a_door_the_layers_do_not_read_values():
    scores, lens = torch.randn(2, 3, 4), torch.tensor([4, 2])
    assert host_reads(lambda: d2l.masked_softmax(scores, lens)) > 0  # alone, it checks
    with checks.door(lens=[("valid_lens", lens, 0, 4)]):
        assert host_reads(lambda: d2l.masked_softmax(scores, lens)) == 0


def test_out_of_vocabulary_ids_get_a_clear_error_not_an_index_error():
    enc = d2l.Seq2SeqEncoder(10, 4, 8, 1)
    with pytest.raises(ValueError, match=r"X must hold token ids in \[0, 10\)"):
        enc(torch.tensor([[3, 12]]), torch.tensor([2]))


def test_the_gru_encoder_reads_its_inputs_once_plus_the_packing():
    enc = d2l.Seq2SeqEncoder(10, 4, 8, 2)
    X, lens = torch.randint(0, 10, (3, 5)), torch.tensor([5, 2, 3])
    # one door, and pack_padded_sequence's lengths on the host (which it needs by design)
    assert host_reads(lambda: enc(X, lens)) <= 2


def _translation_model():
    d2l.set_seed(0)
    enc = d2l.TransformerEncoder(50, 32, 64, 4, 2, 0.0)
    dec = d2l.TransformerDecoder(60, 32, 64, 4, 2, 0.0)
    net = d2l.EncoderDecoder(enc, dec)
    X, Y = torch.randint(0, 50, (4, 7)), torch.randint(0, 60, (4, 6))
    return net, X, Y, torch.tensor([7, 5, 3, 6])


def test_a_transformer_forward_reads_values_twice_on_the_fast_path():
    net, X, Y, lens = _translation_model()

    def fast():
        with d2l.fast_attention(net):
            net(X, Y, lens)

    assert host_reads(fast) <= 2


def test_a_transformer_forward_reads_values_at_most_four_times_on_the_taught_path():
    net, X, Y, lens = _translation_model()
    assert host_reads(lambda: net(X, Y, lens)) <= 4


def test_the_transformer_doors_still_refuse_bad_values():
    net, X, Y, lens = _translation_model()
    with pytest.raises(ValueError, match=r"X must hold token ids in \[0, 50\)"):
        net(X + 50, Y, lens)
    with pytest.raises(ValueError, match=r"X must hold token ids in \[0, 60\)"):
        net(X, Y + 60, lens)
    with pytest.raises(ValueError, match=r"valid_lens must lie in \[1, 7\]"):
        net(X, Y, torch.tensor([7, 5, 3, 8]))
    state = net.decoder.init_state(net.encoder(X, lens), torch.tensor([7, 5, 0, 6]))
    with pytest.raises(ValueError, match=r"enc_valid_lens must lie in \[1, 7\]"):
        net.decoder(Y, state)


def test_the_gpt_reads_its_tokens_once():
    lm = d2l.GPT(20, 16, 4, 2, 16)
    assert host_reads(lambda: lm(torch.randint(0, 20, (2, 9)))) == 1


@pytest.mark.parametrize("attention", [False, True])
def test_a_seq2seq_forward_reads_values_a_fixed_number_of_times(attention):
    """The GRU decoders check ids (and the Bahdanau decoder the source lengths) at their door,
    not at every step: the count does not grow with the number of target steps."""
    decoder_class = d2l.Seq2SeqAttentionDecoder if attention else d2l.Seq2SeqDecoder
    torch.manual_seed(0)
    net = d2l.Seq2Seq(d2l.Seq2SeqEncoder(11, 8, 16, 2), decoder_class(13, 8, 16, 2)).eval()
    X, lens = torch.randint(0, 11, (3, 5)), torch.tensor([5, 2, 1])
    counts = []
    for steps in (4, 12):
        Y = torch.randint(0, 13, (3, steps))
        with torch.no_grad():
            counts.append(host_reads(lambda Y=Y: net(X, Y, lens)))
    assert counts[0] == counts[1] <= 4, counts
    with pytest.raises(ValueError, match=r"X must hold token ids in \[0, 13\)"):
        net(X, torch.full((3, 4), 13), lens)
