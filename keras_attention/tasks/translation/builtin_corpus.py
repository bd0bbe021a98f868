"""Built-in English -> Spanish parallel corpus, generated from a small grammar.

The sentences come from a seeded random grammar, so the corpus needs no
download and is the same on every machine. The target side follows real
Spanish rules, which makes the word alignment a translation model has to
learn far from diagonal:

- articles, possessives and adjectives agree with the noun in gender and
  number ("the white houses" -> "las casas blancas", "our red flower" ->
  "nuestra flor roja");
- adjectives follow the noun ("the big dog" -> "el perro grande", "a very
  small letter" -> "una carta muy pequeña");
- verbs agree with the subject ("i sleep" -> "yo duermo", "the dogs sleep"
  -> "los perros duermen"), and "do not" / "does not" become "no";
- object pronouns become clitics before the verb ("the cat sees him" ->
  "el gato lo ve", "the boy gives her the book" -> "el niño le da el libro");
- questions put the verb first ("does the cat see the dog" -> "ve el gato
  al perro");
- animate objects take the personal "a", contracted with "el" ("sees the
  dog" -> "ve al perro"), and "of the" becomes "del";
- subordinate clauses ("i know that the cat sees the dog" -> "yo sé que el
  gato ve al perro") nest the rules above.

Every English sentence has exactly one translation. Sentences are lowercase,
space separated, without punctuation, 3 to 16 words long; the source side
uses about 95 distinct words and the target side about 160.

Example:

>>> from keras_attention.tasks.translation.builtin_corpus import builtin_translation_pairs
>>> pairs = builtin_translation_pairs(num_pairs=100, seed=0)
>>> len(pairs)
100
>>> all(3 <= len(source.split()) <= 16 for source, _ in pairs)
True
"""

import collections
import functools
import random

_MIN_WORDS = 3
_MAX_WORDS = 16
_ANIMATE = ("person", "animal")
_ANY_KIND = ("person", "animal", "food", "text", "thing", "place")

_Noun = collections.namedtuple("_Noun", "english english_plural spanish spanish_plural gender kind")
_NOUNS = (
    _Noun("dog", "dogs", "perro", "perros", "m", "animal"),
    _Noun("cat", "cats", "gato", "gatos", "m", "animal"),
    _Noun("bird", "birds", "pájaro", "pájaros", "m", "animal"),
    _Noun("boy", "boys", "niño", "niños", "m", "person"),
    _Noun("girl", "girls", "niña", "niñas", "f", "person"),
    _Noun("man", "men", "hombre", "hombres", "m", "person"),
    _Noun("woman", "women", "mujer", "mujeres", "f", "person"),
    _Noun("apple", "apples", "manzana", "manzanas", "f", "food"),
    _Noun("cake", "cakes", "pastel", "pasteles", "m", "food"),
    _Noun("book", "books", "libro", "libros", "m", "text"),
    _Noun("letter", "letters", "carta", "cartas", "f", "text"),
    _Noun("car", "cars", "coche", "coches", "m", "thing"),
    _Noun("flower", "flowers", "flor", "flores", "f", "thing"),
    _Noun("house", "houses", "casa", "casas", "f", "place"),
    _Noun("city", "cities", "ciudad", "ciudades", "f", "place"),
    _Noun("garden", "gardens", "jardín", "jardines", "m", "place"),
)

# Spanish masculine singular form and the noun kinds the adjective describes.
_Adjective = collections.namedtuple("_Adjective", "english spanish kinds")
_ADJECTIVES = (
    _Adjective("big", "grande", _ANY_KIND),
    _Adjective("small", "pequeño", _ANY_KIND),
    _Adjective("old", "viejo", _ANY_KIND),
    _Adjective("new", "nuevo", ("food", "text", "thing", "place")),
    _Adjective("red", "rojo", ("animal", "food", "text", "thing", "place")),
    _Adjective("white", "blanco", ("animal", "food", "text", "thing", "place")),
    _Adjective("blue", "azul", ("text", "thing", "place")),
    _Adjective("happy", "feliz", _ANIMATE),
)

# Spanish forms: (masculine singular, feminine singular, masculine plural,
# feminine plural); None where the English word has no such use.
_DETERMINERS = {
    "the": ("el", "la", "los", "las"),
    "a": ("un", "una", None, None),
    "some": (None, None, "unos", "unas"),
    "my": ("mi", "mi", "mis", "mis"),
    "your": ("tu", "tu", "tus", "tus"),
    "his": ("su", "su", "sus", "sus"),
    "her": ("su", "su", "sus", "sus"),
    "our": ("nuestro", "nuestra", "nuestros", "nuestras"),
    "their": ("su", "su", "sus", "sus"),
}
# "a" stands for the indefinite article: "a"/"an" in the singular, "some" in the plural.
_DETERMINER_CHOICES = ("the", "a", "my", "your", "his", "her", "our", "their")
_DETERMINER_WEIGHTS = (9, 4, 1, 1, 1, 1, 1, 1)

# Person index 0..4 = yo, tú, él/ella, nosotros, ellos: the column of a verb's
# Spanish conjugation. Spanish gender matters for adjectives after "is".
_Pronoun = collections.namedtuple(
    "_Pronoun", "english english_object spanish direct_clitic indirect_clitic person gender"
)
_PRONOUNS = (
    _Pronoun("i", "me", "yo", "me", "me", 0, "m"),
    _Pronoun("you", "you", "tú", "te", "te", 1, "m"),
    _Pronoun("he", "him", "él", "lo", "le", 2, "m"),
    _Pronoun("she", "her", "ella", "la", "le", 2, "f"),
    _Pronoun("we", "us", "nosotros", "nos", "nos", 3, "m"),
    _Pronoun("they", "them", "ellos", "los", "les", 4, "m"),
)
_THIRD_PERSON_PRONOUNS = tuple(p for p in _PRONOUNS if p.person in (2, 4))

# frame: "transitive" (a noun phrase object, or a clitic pronoun when
# `pronoun_object`), "intransitive" (`place`: needs "in" + a place),
# "ditransitive" (give something to someone) or "clausal" (... that CLAUSE).
# `personal_a`: animate objects take "a" ("ve al perro"), as with most verbs
# but not "tener" ("tiene un perro").
_Verb = collections.namedtuple(
    "_Verb", "english english_third spanish frame subjects objects pronoun_object personal_a place"
)
# fmt: off
_VERBS = (
    _Verb("see", "sees", ("veo", "ves", "ve", "vemos", "ven"),
          "transitive", _ANIMATE, _ANY_KIND, True, True, False),
    _Verb("eat", "eats", ("como", "comes", "come", "comemos", "comen"),
          "transitive", _ANIMATE, ("food",), False, True, False),
    _Verb("want", "wants", ("quiero", "quieres", "quiere", "queremos", "quieren"),
          "transitive", _ANIMATE, ("food", "text", "thing"), False, True, False),
    _Verb("have", "has", ("tengo", "tienes", "tiene", "tenemos", "tienen"),
          "transitive", ("person",), ("animal", "food", "text", "thing"), False, False, False),
    _Verb("read", "reads", ("leo", "lees", "lee", "leemos", "leen"),
          "transitive", ("person",), ("text",), False, True, False),
    _Verb("buy", "buys", ("compro", "compras", "compra", "compramos", "compran"),
          "transitive", ("person",), ("food", "text", "thing"), False, True, False),
    _Verb("call", "calls", ("llamo", "llamas", "llama", "llamamos", "llaman"),
          "transitive", ("person",), _ANIMATE, True, True, False),
    _Verb("sleep", "sleeps", ("duermo", "duermes", "duerme", "dormimos", "duermen"),
          "intransitive", _ANIMATE, None, False, False, False),
    _Verb("live", "lives", ("vivo", "vives", "vive", "vivimos", "viven"),
          "intransitive", _ANIMATE, None, False, False, True),
    _Verb("give", "gives", ("doy", "das", "da", "damos", "dan"),
          "ditransitive", ("person",), ("food", "text", "thing"), False, False, False),
    _Verb("know", "knows", ("sé", "sabes", "sabe", "sabemos", "saben"),
          "clausal", ("person",), None, False, False, False),
    _Verb("think", "thinks", ("creo", "crees", "cree", "creemos", "creen"),
          "clausal", ("person",), None, False, False, False),
)
# fmt: on

_CLAUSE_KINDS = (
    "transitive",
    "pronoun_object",
    "intransitive",
    "copula",
    "ditransitive",
    "clausal",
)
# Nested clauses are rarer the deeper they are, and stop at two levels.
_CLAUSE_WEIGHTS = {
    0: (30, 12, 14, 14, 10, 20),
    1: (30, 12, 14, 14, 10, 8),
    2: (30, 12, 14, 14, 10, 0),
}

# A noun phrase or subject pronoun in both languages, with what agreement needs.
_Phrase = collections.namedtuple("_Phrase", "english spanish gender person kind")


def _check_int(name, value, minimum):
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"`{name}` must be an integer >= {minimum}. Received: {name}={value!r}")


def _check_fraction(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
        raise ValueError(f"`{name}` must be a number in [0, 1). Received: {name}={value!r}")


def _spanish_adjective(masculine, gender, plural):
    """Inflect a Spanish adjective: rojo -> roja/rojos/rojas, feliz -> felices."""
    form = masculine[:-1] + "a" if gender == "f" and masculine.endswith("o") else masculine
    if not plural:
        return form
    if form[-1] in "aeiou":
        return form + "s"
    if form.endswith("z"):
        return form[:-1] + "ces"
    return form + "es"


def _with_preposition(preposition, spanish_words):
    """Prefix "a" or "de", contracting with "el" into "al" / "del"."""
    if spanish_words[0] == "el" and preposition in ("a", "de"):
        return [preposition + "l"] + spanish_words[1:]
    return [preposition] + spanish_words


@functools.lru_cache(maxsize=None)
def _nouns_of(kinds):
    return [noun for noun in _NOUNS if noun.kind in kinds]


@functools.lru_cache(maxsize=None)
def _adjectives_for(kind):
    return [adjective for adjective in _ADJECTIVES if kind in adjective.kinds]


@functools.lru_cache(maxsize=None)
def _verbs_for(kind):
    if kind == "pronoun_object":
        return [verb for verb in _VERBS if verb.pronoun_object]
    return [verb for verb in _VERBS if verb.frame == kind]


def _noun_phrase(rng, kinds, allow_possessor=True):
    noun = rng.choice(_nouns_of(kinds))
    plural = rng.random() < 0.35
    determiner = rng.choices(_DETERMINER_CHOICES, _DETERMINER_WEIGHTS)[0]
    if determiner == "a" and plural:
        determiner = "some"
    column = (2 if plural else 0) + (1 if noun.gender == "f" else 0)

    english = [noun.english_plural if plural else noun.english]
    spanish = [noun.spanish_plural if plural else noun.spanish]
    if rng.random() < 0.4:
        adjective = rng.choice(_adjectives_for(noun.kind))
        english.insert(0, adjective.english)
        spanish.append(_spanish_adjective(adjective.spanish, noun.gender, plural))
        if rng.random() < 0.2:
            english.insert(0, "very")
            spanish.insert(1, "muy")
    if determiner == "a" and english[0][0] in "aeiou":
        determiner_word = "an"
    else:
        determiner_word = determiner
    english.insert(0, determiner_word)
    spanish.insert(0, _DETERMINERS[determiner][column])

    # "the dog of the boy": things and animals belong to people.
    if allow_possessor and noun.kind != "person" and rng.random() < 0.15:
        possessor = _noun_phrase(rng, ("person",), allow_possessor=False)
        english += ["of"] + possessor.english
        spanish += _with_preposition("de", possessor.spanish)
    return _Phrase(english, spanish, noun.gender, 4 if plural else 2, noun.kind)


def _subject(rng, kinds, pronouns=_PRONOUNS):
    """A noun phrase (70%) or a subject pronoun (30%)."""
    if rng.random() < 0.3:
        pronoun = rng.choice(pronouns)
        return _Phrase(
            [pronoun.english], [pronoun.spanish], pronoun.gender, pronoun.person, "pronoun"
        )
    return _noun_phrase(rng, kinds)


def _object_pronoun(rng, subject):
    """A pronoun object that is not the subject itself ("i see me" needs "myself")."""
    return rng.choice([p for p in _PRONOUNS if p.person in (2, 4) or p.person != subject.person])


def _copula_clause(rng, allow_question):
    subject = _subject(rng, _ANY_KIND, pronouns=_THIRD_PERSON_PRONOUNS)
    kind = "person" if subject.kind == "pronoun" else subject.kind
    adjective = rng.choice(_adjectives_for(kind))
    plural = subject.person == 4
    english_adjective = [adjective.english]
    spanish_adjective = [_spanish_adjective(adjective.spanish, subject.gender, plural)]
    if rng.random() < 0.2:
        english_adjective.insert(0, "very")
        spanish_adjective.insert(0, "muy")
    english_verb, spanish_verb = ("are", "son") if plural else ("is", "es")

    negated = rng.random() < 0.2
    if allow_question and not negated and subject.kind != "pronoun" and rng.random() < 0.15:
        english = [english_verb] + subject.english + english_adjective
        spanish = [spanish_verb] + subject.spanish + spanish_adjective
    else:
        english = subject.english + [english_verb] + (["not"] if negated else [])
        english += english_adjective
        spanish = subject.spanish + (["no"] if negated else []) + [spanish_verb]
        spanish += spanish_adjective
    return english, spanish


def _verb_clause(rng, kind, depth, allow_question):
    """One random clause around a verb of `kind`: `(english, spanish)` word lists.

    `depth` is how deep it is nested in other clauses; `allow_question` lets it be a question.
    """
    frame = "transitive" if kind == "pronoun_object" else kind
    verb = rng.choice(_verbs_for(kind))
    subject = _subject(rng, verb.subjects)

    # English words after the verb, Spanish clitics before it and words after it.
    english_rest, clitics, spanish_rest = [], [], []
    if kind == "pronoun_object":
        pronoun = _object_pronoun(rng, subject)
        english_rest = [pronoun.english_object]
        clitics = [pronoun.direct_clitic]
    elif frame == "transitive":
        thing = _noun_phrase(rng, verb.objects)
        english_rest = thing.english
        if verb.personal_a and thing.kind in _ANIMATE:
            spanish_rest = _with_preposition("a", thing.spanish)
        else:
            spanish_rest = thing.spanish
    elif frame == "ditransitive":
        thing = _noun_phrase(rng, verb.objects)
        if rng.random() < 0.5:
            pronoun = _object_pronoun(rng, subject)
            english_rest = [pronoun.english_object] + thing.english
            clitics = [pronoun.indirect_clitic]
            spanish_rest = thing.spanish
        else:
            recipient = _noun_phrase(rng, _ANIMATE)
            english_rest = thing.english + ["to"] + recipient.english
            spanish_rest = thing.spanish + _with_preposition("a", recipient.spanish)
    elif frame == "clausal":
        english_inner, spanish_inner = _clause(rng, depth + 1, allow_question=False)
        english_rest = ["that"] + english_inner
        spanish_rest = ["que"] + spanish_inner

    # Where the action happens, or with whom: always for "live", sometimes otherwise.
    if frame != "clausal":
        chance = 1.0 if verb.place else (0.5 if frame == "intransitive" else 0.1)
        if rng.random() < chance:
            if verb.place or rng.random() < 0.6:
                place = _noun_phrase(rng, ("place",), allow_possessor=False)
                english_rest = english_rest + ["in"] + place.english
                spanish_rest = spanish_rest + ["en"] + place.spanish
            else:
                companion = _noun_phrase(rng, _ANIMATE, allow_possessor=False)
                english_rest = english_rest + ["with"] + companion.english
                spanish_rest = spanish_rest + ["con"] + companion.spanish

    third_singular = subject.person == 2
    auxiliary = "does" if third_singular else "do"
    spanish_verb = verb.spanish[subject.person]
    negated = frame != "clausal" and rng.random() < 0.2
    question = (
        allow_question
        and not negated
        and frame != "clausal"
        and subject.kind != "pronoun"
        and rng.random() < 0.15
    )
    if question:
        english = [auxiliary] + subject.english + [verb.english] + english_rest
        spanish = clitics + [spanish_verb] + subject.spanish + spanish_rest
    elif negated:
        english = subject.english + [auxiliary, "not", verb.english] + english_rest
        spanish = subject.spanish + ["no"] + clitics + [spanish_verb] + spanish_rest
    else:
        english_verb = verb.english_third if third_singular else verb.english
        english = subject.english + [english_verb] + english_rest
        spanish = subject.spanish + clitics + [spanish_verb] + spanish_rest
    return english, spanish


def _clause(rng, depth, allow_question):
    kind = rng.choices(_CLAUSE_KINDS, _CLAUSE_WEIGHTS[depth])[0]
    if kind == "copula":
        return _copula_clause(rng, allow_question)
    return _verb_clause(rng, kind, depth, allow_question)


def builtin_translation_pairs(num_pairs=20000, seed=0):
    """Generate English -> Spanish sentence pairs with distinct source sentences.

    Args:
        num_pairs: number of pairs, an integer >= 1.
        seed: integer seed; the same seed always gives the same pairs.

    Returns:
        list of `(english, spanish)` string tuples, in random order, with no
        English sentence repeated.

    Example:

    >>> from keras_attention.tasks.translation.builtin_corpus import builtin_translation_pairs
    >>> pairs = builtin_translation_pairs(num_pairs=5, seed=0)
    >>> len(pairs), len({source for source, _ in pairs})
    (5, 5)
    >>> pairs == builtin_translation_pairs(num_pairs=5, seed=0)
    True
    """
    _check_int("num_pairs", num_pairs, 1)
    _check_int("seed", seed, 0)
    rng = random.Random(seed)
    translations = {}
    # The grammar has millions of sentences; the cap only guards against a hang.
    for _ in range(100 * num_pairs):
        english, spanish = _clause(rng, depth=0, allow_question=True)
        lengths = (len(english), len(spanish))
        if _MIN_WORDS <= min(lengths) and max(lengths) <= _MAX_WORDS:
            translations.setdefault(" ".join(english), " ".join(spanish))
            if len(translations) == num_pairs:
                return list(translations.items())
    raise ValueError(
        "The grammar could not produce that many distinct sentences. "
        f"Received: num_pairs={num_pairs}"
    )


def split_translation_pairs(pairs, validation_fraction=0.05, test_fraction=0.05, seed=0):
    """Split pairs into train/validation/test so that no source is in two splits.

    All pairs that share a source sentence go to the same split, and the
    split a source goes to is decided by a seeded shuffle.

    Args:
        pairs: sequence of `(source, target)` string tuples.
        validation_fraction: fraction of the distinct sources in "validation".
        test_fraction: fraction of the distinct sources in "test".
        seed: integer seed of the shuffle.

    Returns:
        dict `{"train": [...], "validation": [...], "test": [...]}` of pair
        lists, each keeping the input order.

    Example:

    >>> from keras_attention.tasks.translation.builtin_corpus import split_translation_pairs
    >>> pairs = [(f"s{i}", f"t{i}") for i in range(20)]
    >>> splits = split_translation_pairs(pairs, validation_fraction=0.1, test_fraction=0.2)
    >>> {name: len(split) for name, split in splits.items()}
    {'train': 14, 'validation': 2, 'test': 4}
    """
    _check_fraction("validation_fraction", validation_fraction)
    _check_fraction("test_fraction", test_fraction)
    if validation_fraction + test_fraction >= 1:
        raise ValueError(
            "`validation_fraction + test_fraction` must be below 1 to leave training data. "
            f"Received: validation_fraction={validation_fraction}, test_fraction={test_fraction}"
        )
    _check_int("seed", seed, 0)
    sources = list(dict.fromkeys(source for source, _ in pairs))
    random.Random(seed).shuffle(sources)
    num_test = round(len(sources) * test_fraction)
    num_validation = round(len(sources) * validation_fraction)
    split_of = {}
    for index, source in enumerate(sources):
        if index < num_test:
            split_of[source] = "test"
        elif index < num_test + num_validation:
            split_of[source] = "validation"
        else:
            split_of[source] = "train"
    splits = {"train": [], "validation": [], "test": []}
    for source, target in pairs:
        splits[split_of[source]].append((source, target))
    return splits


def builtin_translation_splits(
    num_pairs=20000, seed=0, validation_fraction=0.05, test_fraction=0.05
):
    """The built-in corpus split into train/validation/test with disjoint sources.

    Args:
        num_pairs: total number of pairs over the three splits.
        seed: integer seed of the sentences and of the split.
        validation_fraction: fraction of the pairs in "validation".
        test_fraction: fraction of the pairs in "test".

    Returns:
        dict `{"train": [...], "validation": [...], "test": [...]}` of
        `(english, spanish)` tuples.

    Example:

    >>> from keras_attention.tasks.translation.builtin_corpus import builtin_translation_splits
    >>> splits = builtin_translation_splits(num_pairs=200, seed=0)
    >>> {name: len(pairs) for name, pairs in splits.items()}
    {'train': 180, 'validation': 10, 'test': 10}
    """
    pairs = builtin_translation_pairs(num_pairs=num_pairs, seed=seed)
    return split_translation_pairs(pairs, validation_fraction, test_fraction, seed=seed)
