"""Numbers written as one word, as Dutch and Finnish write them (0 to 999,999).

Both languages build a number's name from parts without spaces, so a six-digit
number is one word of 40-90 characters: a long target assembled from a few
dozen pieces, where a translator that loses its place repeats or skips a part.

- Dutch puts the units before the tens, joined by "en" ("ën" after a vowel
  e: "tweeëntwintig"), as German does: 769 is "zevenhonderdnegenenzestig".
  Dutch spelling puts a space after "duizend"; here the thousands are joined
  too, so that every number is one word.
- Finnish keeps the order of the digits and inflects the multipliers
  ("kaksisataa", "kolmetuhatta"): 769 is
  "seitsemänsataakuusikymmentäyhdeksän".

Example:

>>> from benchmarks.number_words import number_word
>>> number_word(769, "dutch"), number_word(3300, "dutch")
('zevenhonderdnegenenzestig', 'drieduizenddriehonderd')
>>> number_word(3300, "finnish")
'kolmetuhattakolmesataa'
"""

_DUTCH_BELOW_TWENTY = (
    "nul een twee drie vier vijf zes zeven acht negen tien elf twaalf dertien veertien "
    "vijftien zestien zeventien achttien negentien"
).split()
_DUTCH_TENS = ("", "", "twintig", "dertig", "veertig", "vijftig", "zestig", "zeventig")
_DUTCH_TENS += ("tachtig", "negentig")
_FINNISH_UNITS = ("nolla yksi kaksi kolme neljä viisi kuusi seitsemän kahdeksan yhdeksän").split()

NUMBER_WORD_LANGUAGES = ("dutch", "finnish")
LARGEST_NUMBER = 999_999


def _dutch_below_hundred(n):
    if n < 20:
        return _DUTCH_BELOW_TWENTY[n]
    tens, units = divmod(n, 10)
    if units == 0:
        return _DUTCH_TENS[tens]
    unit = _DUTCH_BELOW_TWENTY[units]
    # The linking "en" takes a diaeresis after a final e: twee-ën-twintig, drie-ën-dertig.
    return unit + ("ën" if unit.endswith("e") else "en") + _DUTCH_TENS[tens]


def _finnish_below_hundred(n):
    if n < 10:
        return _FINNISH_UNITS[n]
    if n == 10:
        return "kymmenen"
    if n < 20:
        return _FINNISH_UNITS[n - 10] + "toista"
    tens, units = divmod(n, 10)
    word = _FINNISH_UNITS[tens] + "kymmentä"
    return word if units == 0 else word + _FINNISH_UNITS[units]


# For each language: the name below a hundred, and the words of one and of several
# hundreds and thousands ("honderd" / "tweehonderd"; "sata" / "kaksisataa").
_LANGUAGES = {
    "dutch": (_dutch_below_hundred, ("honderd", "honderd"), ("duizend", "duizend")),
    "finnish": (_finnish_below_hundred, ("sata", "sataa"), ("tuhat", "tuhatta")),
}


def _below_thousand(n, below_hundred, hundred_words):
    hundreds, rest = divmod(n, 100)
    if hundreds == 0:
        return below_hundred(rest)
    one, several = hundred_words
    head = one if hundreds == 1 else below_hundred(hundreds) + several
    return head if rest == 0 else head + below_hundred(rest)


def number_word(value, language):
    """The name of an int in [0, 999999] in `language`, written as one word.

    Args:
        value: the number.
        language: one of `NUMBER_WORD_LANGUAGES`.

    Returns:
        the number's name, lower case, without spaces.

    Example:

    >>> from benchmarks.number_words import number_word
    >>> number_word(22, "dutch"), number_word(101, "dutch"), number_word(21000, "dutch")
    ('tweeëntwintig', 'honderdeen', 'eenentwintigduizend')
    >>> number_word(12, "finnish"), number_word(1000, "finnish")
    ('kaksitoista', 'tuhat')
    """
    if language not in _LANGUAGES:
        raise ValueError(
            f"`language` must be one of {NUMBER_WORD_LANGUAGES}. Received: language={language!r}"
        )
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= LARGEST_NUMBER:
        raise ValueError(
            f"`value` must be an int in [0, {LARGEST_NUMBER}]. Received: value={value!r}"
        )
    below_hundred, hundred_words, thousand_words = _LANGUAGES[language]
    if value < 1000:
        return _below_thousand(value, below_hundred, hundred_words)
    thousands, rest = divmod(value, 1000)
    one, several = thousand_words
    head = one if thousands == 1 else _below_thousand(thousands, below_hundred, hundred_words)
    head += "" if thousands == 1 else several
    return head if rest == 0 else head + _below_thousand(rest, below_hundred, hundred_words)
