import pytest
import torch

from course_utils.packing import pack_blocks
from course_utils.wordpiece import SPECIAL_TOKENS, canonical_vocab, pieces_per_word, train_wordpiece


@pytest.fixture(scope="module")
def small_tokenizer(sentences):
    return train_wordpiece(sentences, 600)


def test_trained_tokenizer_is_a_bert_tokenizer(small_tokenizer):
    tok = small_tokenizer
    assert len(tok) <= 600
    assert [tok.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS] == [0, 1, 2, 3, 4]
    assert tok.mask_token == "[MASK]" and tok.pad_token_id == 0
    ids = tok("A gripping, Funny film.")["input_ids"]
    assert ids[0] == tok.cls_token_id and ids[-1] == tok.sep_token_id
    assert tok.decode(ids, skip_special_tokens=True) == "a gripping, funny film."  # lower-cased, pieces rejoined


def test_ids_are_canonical_whatever_order_the_trainer_used(sentences, small_tokenizer):
    vocab = small_tokenizer.get_vocab()
    shuffled = dict(zip(sorted(vocab, key=lambda t: hash(t)), range(len(vocab))))
    assert canonical_vocab(shuffled) == vocab
    again = train_wordpiece(sentences, 600).get_vocab()
    assert len(set(again) & set(vocab)) >= 0.99 * len(vocab)  # the trainer may break a tie differently


def test_bigger_vocabularies_split_words_less(sentences, small_tokenizer):
    bigger = train_wordpiece(sentences, 3000)
    assert pieces_per_word(bigger, sentences[:300]) < pieces_per_word(small_tokenizer, sentences[:300])


@pytest.mark.parametrize("bad", [5, 0, -1, 2.5, True])
def test_vocabulary_must_exceed_the_special_tokens(bad):
    with pytest.raises(ValueError, match=r"5 special tokens.*Accepted: an int > 5"):
        train_wordpiece(["some text"], bad)


def test_bad_corpora_are_refused():
    with pytest.raises(TypeError, match="not one string"):
        train_wordpiece("one long string", 100)
    with pytest.raises(ValueError, match="no non-empty texts"):
        train_wordpiece(["", "   "], 100)


def test_packed_blocks_are_full_and_keep_the_text_in_order(small_tokenizer, sentences):
    tok = small_tokenizer
    blocks = pack_blocks(sentences[:200], tok, 32)
    assert blocks.dtype == torch.long and blocks.shape[1] == 32
    assert (blocks[:, 0] == tok.cls_token_id).all() and (blocks[:, -1] == tok.sep_token_id).all()
    assert not (blocks == tok.pad_token_id).any()  # packing leaves no padding
    stream = []
    for ids in tok(sentences[:200], add_special_tokens=False)["input_ids"]:
        stream += ids + [tok.sep_token_id]
    assert blocks[:, 1:-1].reshape(-1).tolist() == stream[: blocks.shape[0] * 30]
    assert len(stream) - blocks.shape[0] * 30 < 30  # only a tail shorter than one block is dropped


def test_packing_errors(small_tokenizer):
    with pytest.raises(ValueError, match=r"fewer than one block of 126 pieces.*smaller block_length"):
        pack_blocks(["just a few words"], small_tokenizer, 128)
    with pytest.raises(ValueError, match="block_length must be an int >= 3"):
        pack_blocks(["text"], small_tokenizer, 2)
    with pytest.raises(TypeError, match="not one string"):
        pack_blocks("text", small_tokenizer, 16)
