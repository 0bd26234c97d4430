import pytest

from course_utils.baselines import word_overlap, word_overlaps, words


def test_words_ignore_case_and_punctuation():
    assert words("The cat, the CAT!") == {"the", "cat"}
    assert words("...") == set()


def test_word_overlap_is_jaccard():
    assert word_overlap("a cat sat", "a dog sat") == pytest.approx(2 / 4)
    assert word_overlap("Same words.", "same WORDS") == 1.0
    assert word_overlap("one", "two") == 0.0
    assert word_overlap("", "") == 0.0


def test_word_overlaps_pairs_and_bad_input():
    assert word_overlaps(["a b", "c"], ["a", "d"]) == [0.5, 0.0]
    with pytest.raises(ValueError, match="as many first sentences"):
        word_overlaps(["a"], [])
    with pytest.raises(TypeError, match="takes a string"):
        words(None)
