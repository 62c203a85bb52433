"""Texts are embedded in calls of similar lengths, bounded in size and in padding."""

from memories.providers.minilm_onnx import length_batches


def test_texts_are_grouped_shortest_first_within_the_token_budget():
    # given eight texts of these token lengths, in no order
    lengths = [30, 10, 12, 31, 11, 60, 32, 300]

    # when they are grouped for calls of at most 64 tokens, 15% padding and 4 texts
    batches = length_batches(lengths, tokens=64, padding=0.15, size=4)

    # then similar lengths share a call, and the text past the budget goes alone
    assert batches == [[1, 4, 2], [0, 3], [6], [5], [7]]


def test_a_call_holds_no_more_texts_than_its_size():
    # given six texts of one length
    lengths = [8] * 6

    # when the call size is 4
    batches = length_batches(lengths, tokens=1000, padding=0.15, size=4)

    # then the first four go together, the rest in a second call
    assert batches == [[0, 1, 2, 3], [4, 5]]


def test_too_much_padding_starts_a_new_call():
    # given a short text and one twice as long
    lengths = [10, 20]

    # when at most 15% of a call may be padding (10 of 40 padded tokens would be 25%)
    batches = length_batches(lengths, tokens=1000, padding=0.15, size=64)

    # then each has its own call
    assert batches == [[0], [1]]


def test_no_texts_no_calls():
    assert length_batches([], tokens=256, padding=0.15, size=64) == []
