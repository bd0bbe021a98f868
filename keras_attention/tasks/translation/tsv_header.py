"""A tsv file's first line of column names (`source<TAB>target`, `en<TAB>de`), told from a pair.

`pandas.DataFrame.to_csv(sep="\\t")` and most spreadsheet exports write the
column names first. Read as a `source<TAB>target` pair, that line would
teach a translator that "en" means "de". A first line is taken for column
names when each of its first two fields is made only of words that name a
column: a role ("source", "target", "src", "text", ...), a language
("english", ...), or a language code (ISO 639-1 "en", "pt-BR"; a few
ISO 639-3 ones that Tatoeba uses, "eng"), joined by `_`, `-`, `.` or spaces
("text_en", "Source Sentence"), and the two fields differ.

Example:

>>> from keras_attention.tasks.translation.tsv_header import is_column_names
>>> is_column_names(["source", "target"]), is_column_names(["text_en", "text_fr", "license"])
(True, True)
>>> is_column_names(["Go.", "Ve."]), is_column_names(["en", "en"])
(False, False)
"""

import re

_ROLES = (
    "source target src tgt trg input output text sentence sentences translation translations "
    "original reference lang language from to"
).split()
_LANGUAGE_NAMES = (
    "english spanish french german italian portuguese dutch russian chinese mandarin japanese "
    "korean arabic hindi turkish polish swedish czech greek hebrew finnish danish norwegian "
    "ukrainian vietnamese thai indonesian malay romanian hungarian catalan bulgarian persian "
    "farsi urdu bengali tamil telugu esperanto latin basque galician swahili croatian serbian "
    "slovak slovenian lithuanian latvian estonian icelandic irish welsh tagalog filipino"
).split()
# ISO 639-1, every code.
_TWO_LETTER_CODES = (
    "aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu "
    "cv cy da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi "
    "ho hr ht hu hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks "
    "ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl "
    "nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl "
    "sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve "
    "vi vo wa wo xh yi yo za zh zu"
).split()
# ISO 639-3 codes of the languages Tatoeba exports hold most sentences of.
_THREE_LETTER_CODES = (
    "eng spa fra deu ita por nld rus cmn zho jpn kor ara hin tur pol swe ces ell heb fin dan "
    "nor nob ukr vie tha ind msa ron hun cat bul fas pes urd ben tam epo lat eus glg swh hrv "
    "srp slk slv lit lvs est isl gle cym tgl ber kab tat uzb kaz yue wuu"
).split()
_COLUMN_WORDS = frozenset(_ROLES + _LANGUAGE_NAMES + _TWO_LETTER_CODES + _THREE_LETTER_CODES)
# A language code with a region or script: "pt-BR", "zh_Hans", "en-US".
_TAGGED_CODE = re.compile(r"([a-z]{2,3})[-_]([a-z]{2}|[a-z]{4}|[0-9]{3})")
_SEPARATORS = re.compile(r"[\s_.\-]+")


def _names_a_column(field):
    """Whether `field` is made only of column words (see the module docstring)."""
    field = field.strip().lower()
    tagged = _TAGGED_CODE.fullmatch(field)
    if tagged and tagged.group(1) in _COLUMN_WORDS:
        return True
    words = [word for word in _SEPARATORS.split(field) if word]
    return bool(words) and all(word in _COLUMN_WORDS for word in words)


def is_column_names(fields):
    """Whether a tsv line's `fields` (its tab-separated strings) are column names.

    The first two fields decide: each made of column words, and not the same.
    """
    if len(fields) < 2:
        return False
    source, target = (field.strip().lower() for field in fields[:2])
    return source != target and _names_a_column(source) and _names_a_column(target)
