"""Reading translation pairs and labelled texts from a user's files (npformer.data.text_rows): the
rows kept with their line numbers, and one-line errors naming the file and the first bad line."""
from __future__ import annotations

import pytest

from npformer.data.text_files import TextFileError
from npformer.data.text_rows import read_labelled, read_pairs


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return str(p)


def test_a_tsv_file_gives_pairs_with_their_line_numbers_and_blank_lines_counted(tmp_path):
    p = write(tmp_path, "p.tsv", "source\ttarget\nthe cat\tle chat\n\n  \na dog \t un chien\n")
    rows = read_pairs(p)
    assert rows.rows == [(2, "the cat", "le chat"), (5, "a dog", "un chien")]
    assert rows.blank == 2 and rows.files == [p]


@pytest.mark.parametrize("line, why", [("no tab here", "no tab"),
                                       ("a\tb\tc", "2 tabs, 3 columns"),
                                       ("\tcible", "the source is empty"),
                                       ("source\t ", "the target is empty")])
def test_a_bad_line_is_refused_naming_the_file_and_line(tmp_path, line, why):
    p = write(tmp_path, "p.tsv", f"a\tb\nc\td\n{line}\ne\tf\n{line}\n")
    with pytest.raises(TextFileError) as e:
        read_pairs(p)
    assert str(e.value) == (f"--data {p}: line 3: {why} (expected one source<TAB>target per "
                            f"line); 2 bad lines in all")


def test_two_aligned_files_pair_line_by_line(tmp_path):
    s = write(tmp_path, "train.de", "das Haus\n\nein Hund\n")
    t = write(tmp_path, "train.en", "the house\n\na dog\n")
    rows = read_pairs([s, t])
    assert rows.rows == [(1, "das Haus", "the house"), (3, "ein Hund", "a dog")]
    assert rows.blank == 1


def test_misaligned_files_are_refused_with_both_line_counts(tmp_path):
    s = write(tmp_path, "a.txt", "x\ny\nz\n")
    t = write(tmp_path, "b.txt", "X\nY\n")
    with pytest.raises(TextFileError, match=r"a\.txt: 3 lines, but the target file .*b\.txt has 2"):
        read_pairs([s, t])


def test_a_line_empty_on_one_side_only_is_refused_with_its_number(tmp_path):
    s = write(tmp_path, "a.txt", "x\n\nz\n")
    t = write(tmp_path, "b.txt", "X\nY\nZ\n")
    with pytest.raises(TextFileError, match=r"line 2: empty in .*a\.txt but not in .*b\.txt"):
        read_pairs([s, t])


def test_three_data_files_are_not_a_translation_corpus(tmp_path):
    paths = [write(tmp_path, f"{i}.txt", "x\n") for i in range(3)]
    with pytest.raises(TextFileError, match="got 3 paths"):
        read_pairs(paths)


def test_a_labelled_tsv_skips_its_header(tmp_path):
    p = write(tmp_path, "l.tsv", "sentence\tlabel\ngreat film\tpos\nbad\tneg\n")
    assert read_labelled(p).rows == [(2, "great film", "pos"), (3, "bad", "neg")]


def test_a_csv_file_reads_its_text_and_label_columns_by_header(tmp_path):
    p = write(tmp_path, "l.csv", 'id,label,text\n1,pos,"great, really"\n2,neg,"bad ""film"""\n')
    assert read_labelled(p).rows == [(2, "great, really", "pos"), (3, 'bad "film"', "neg")]


def test_a_csv_file_without_the_columns_is_refused_naming_what_it_has(tmp_path):
    p = write(tmp_path, "l.csv", "review_text,score\nok,1\n")
    with pytest.raises(TextFileError, match=r"line 1: expected a CSV header with a text column .* "
                                            r"got \['review_text', 'score'\]"):
        read_labelled(p)


def test_a_ragged_csv_row_is_refused_with_its_line(tmp_path):
    p = write(tmp_path, "l.csv", "text,label\nok,pos\nmore,neg,extra\n")
    with pytest.raises(TextFileError, match="line 3: 3 fields, the header has 2"):
        read_labelled(p)


def test_an_empty_file_is_refused_by_name(tmp_path):
    p = write(tmp_path, "e.tsv", "")
    with pytest.raises(TextFileError, match=r"e\.tsv: the file is empty"):
        read_pairs(p)
