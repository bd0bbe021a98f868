"""The built-in English -> Spanish corpus: determinism, splits and Spanish grammar.

The grammar checks compare generated pairs with Spanish written out by hand
in this file (forms, genders, conjugations), not with the generator's tables.
"""

import re

import pytest

from keras_attention.tasks.translation.builtin_corpus import builtin_translation_pairs
from keras_attention.tasks.translation.builtin_corpus import builtin_translation_splits
from keras_attention.tasks.translation.builtin_corpus import split_translation_pairs

# English noun form -> (Spanish form, gender, plural, animate).
NOUNS = {
    "dog": ("perro", "m", False, True),
    "dogs": ("perros", "m", True, True),
    "cat": ("gato", "m", False, True),
    "cats": ("gatos", "m", True, True),
    "bird": ("pájaro", "m", False, True),
    "birds": ("pájaros", "m", True, True),
    "boy": ("niño", "m", False, True),
    "boys": ("niños", "m", True, True),
    "girl": ("niña", "f", False, True),
    "girls": ("niñas", "f", True, True),
    "man": ("hombre", "m", False, True),
    "men": ("hombres", "m", True, True),
    "woman": ("mujer", "f", False, True),
    "women": ("mujeres", "f", True, True),
    "apple": ("manzana", "f", False, False),
    "apples": ("manzanas", "f", True, False),
    "cake": ("pastel", "m", False, False),
    "cakes": ("pasteles", "m", True, False),
    "book": ("libro", "m", False, False),
    "books": ("libros", "m", True, False),
    "letter": ("carta", "f", False, False),
    "letters": ("cartas", "f", True, False),
    "car": ("coche", "m", False, False),
    "cars": ("coches", "m", True, False),
    "flower": ("flor", "f", False, False),
    "flowers": ("flores", "f", True, False),
    "house": ("casa", "f", False, False),
    "houses": ("casas", "f", True, False),
    "city": ("ciudad", "f", False, False),
    "cities": ("ciudades", "f", True, False),
    "garden": ("jardín", "m", False, False),
    "gardens": ("jardines", "m", True, False),
}
# English adjective -> Spanish (masc. sg., fem. sg., masc. pl., fem. pl.).
ADJECTIVES = {
    "big": ("grande", "grande", "grandes", "grandes"),
    "small": ("pequeño", "pequeña", "pequeños", "pequeñas"),
    "old": ("viejo", "vieja", "viejos", "viejas"),
    "new": ("nuevo", "nueva", "nuevos", "nuevas"),
    "red": ("rojo", "roja", "rojos", "rojas"),
    "white": ("blanco", "blanca", "blancos", "blancas"),
    "blue": ("azul", "azul", "azules", "azules"),
    "happy": ("feliz", "feliz", "felices", "felices"),
}
THE = ("el", "la", "los", "las")
OUR = ("nuestro", "nuestra", "nuestros", "nuestras")
SUBJECT_PRONOUNS = {
    "i": "yo",
    "you": "tú",
    "he": "él",
    "she": "ella",
    "we": "nosotros",
    "they": "ellos",
}
DIRECT_CLITICS = {"me": "me", "you": "te", "him": "lo", "her": "la", "us": "nos", "them": "los"}
# English verb form after a pronoun -> Spanish form for that pronoun.
CONJUGATIONS = {
    ("i", "sleep"): "duermo",
    ("you", "sleep"): "duermes",
    ("he", "sleeps"): "duerme",
    ("she", "sleeps"): "duerme",
    ("we", "sleep"): "dormimos",
    ("they", "sleep"): "duermen",
    ("i", "know"): "sé",
    ("you", "know"): "sabes",
    ("he", "knows"): "sabe",
    ("she", "knows"): "sabe",
    ("we", "know"): "sabemos",
    ("they", "know"): "saben",
    ("i", "think"): "creo",
    ("you", "think"): "crees",
    ("he", "thinks"): "cree",
    ("she", "thinks"): "cree",
    ("we", "think"): "creemos",
    ("they", "think"): "creen",
}
NOUN_PATTERN = "|".join(NOUNS)
ADJECTIVE_PATTERN = "|".join(ADJECTIVES)


def column(noun):
    _, gender, plural, _ = NOUNS[noun]
    return 2 * plural + (gender == "f")


def definite(noun):
    """The Spanish article before `noun`, also as contracted after "a" / "de"."""
    article = THE[column(noun)]
    return "(?:el|al|del)" if article == "el" else article


@pytest.fixture(scope="module")
def corpus():
    return dict(builtin_translation_pairs(num_pairs=20000, seed=0))


def matching(corpus, pattern):
    """(match, target) for every source that `pattern` finds; never empty."""
    found = [(m, target) for source, target in corpus.items() if (m := re.search(pattern, source))]
    assert found, f"no generated sentence matches {pattern!r}"
    return found


def test_same_seed_gives_same_pairs_and_other_seed_other_pairs():
    first = builtin_translation_pairs(num_pairs=300, seed=3)
    assert first == builtin_translation_pairs(num_pairs=300, seed=3)
    assert first != builtin_translation_pairs(num_pairs=300, seed=4)
    assert len({source for source, _ in first}) == 300


def test_every_source_sentence_has_one_translation(corpus):
    other = builtin_translation_pairs(num_pairs=20000, seed=1)
    shared = [(source, target) for source, target in other if source in corpus]
    assert len(shared) > 500
    assert all(corpus[source] == target for source, target in shared)


def test_sentences_are_lowercase_words_of_3_to_16(corpus):
    word_line = re.compile(r"[a-zñáéíóú]+( [a-zñáéíóú]+)*")
    for source, target in corpus.items():
        assert word_line.fullmatch(source) and word_line.fullmatch(target), (source, target)
        assert 3 <= len(source.split()) <= 16
        assert 3 <= len(target.split()) <= 16


def test_vocabulary_sizes(corpus):
    source_words = {word for source in corpus for word in source.split()}
    target_words = {word for target in corpus.values() for word in target.split()}
    assert 60 <= len(source_words) <= 150
    assert 60 <= len(target_words) <= 170
    assert set(NOUNS) <= source_words and set(ADJECTIVES) <= source_words


def test_articles_and_adjectives_agree_and_adjectives_follow_the_noun(corpus):
    for m, target in matching(corpus, rf"\bthe ({ADJECTIVE_PATTERN}) ({NOUN_PATTERN})\b"):
        adjective, noun = m.groups()
        spanish = f"{definite(noun)} {NOUNS[noun][0]} {ADJECTIVES[adjective][column(noun)]}"
        assert re.search(rf"\b{spanish}\b", target), (m.string, target)


def test_possessive_and_very(corpus):
    for m, target in matching(corpus, rf"\bour ({ADJECTIVE_PATTERN}) ({NOUN_PATTERN})\b"):
        adjective, noun = m.groups()
        spanish = f"{OUR[column(noun)]} {NOUNS[noun][0]} {ADJECTIVES[adjective][column(noun)]}"
        assert spanish in target, (m.string, target)
    for m, target in matching(corpus, rf"\bthe very ({ADJECTIVE_PATTERN}) ({NOUN_PATTERN})\b"):
        adjective, noun = m.groups()
        spanish = f"{NOUNS[noun][0]} muy {ADJECTIVES[adjective][column(noun)]}"
        assert spanish in target, (m.string, target)


def test_known_examples(corpus):
    # Hand-translated sentences that the seed-0 corpus happens to contain.
    examples = {
        "she does not see them": "ella no los ve",
        "she is not old": "ella no es vieja",
        "are the letters red": "son las cartas rojas",
        "a man calls the dog": "un hombre llama al perro",
        "the small girls do not see her": "las niñas pequeñas no la ven",
        "do some happy boys give me the cakes": "me dan unos niños felices los pasteles",
        "my girls give them a very small car": "mis niñas les dan un coche muy pequeño",
        "the small woman gives the car to our small bird": "la mujer pequeña da el coche a nuestro pájaro pequeño",
        "the girls know that a cat sees the books": "las niñas saben que un gato ve los libros",
        "the happy girl thinks that the men have a small cat": "la niña feliz cree que los hombres tienen un gato pequeño",
    }
    for source, target in examples.items():
        assert corpus[source] == target


def test_indefinite_article_before_vowels(corpus):
    for m, _ in matching(corpus, rf"\b(a|an) ({ADJECTIVE_PATTERN}|{NOUN_PATTERN})\b"):
        article, word = m.groups()
        assert (article == "an") == (word[0] in "aeiou"), m.string
    for m, target in matching(corpus, rf"\ban old ({NOUN_PATTERN})\b"):
        noun = m[1]
        article = "una" if NOUNS[noun][1] == "f" else "un"
        assert f"{article} {NOUNS[noun][0]} {ADJECTIVES['old'][column(noun)]}" in target


def test_verbs_agree_with_pronoun_subjects(corpus):
    pattern = r"^(i|you|he|she|we|they) (sleep|sleeps|know|knows|think|thinks)\b"
    for m, target in matching(corpus, pattern):
        expected = f"{SUBJECT_PRONOUNS[m[1]]} {CONJUGATIONS[(m[1], m[2])]} "
        assert (target + " ").startswith(expected), (m.string, target)


def test_object_pronouns_become_clitics_before_the_verb(corpus):
    pronouns = "|".join(DIRECT_CLITICS)
    for m, target in matching(corpus, rf"^the ({NOUN_PATTERN}) sees ({pronouns})$"):
        noun, pronoun = m.groups()
        assert target == f"{THE[column(noun)]} {NOUNS[noun][0]} {DIRECT_CLITICS[pronoun]} ve"
    for m, target in matching(corpus, rf"^the ({NOUN_PATTERN}) does not see ({pronouns})$"):
        noun, pronoun = m.groups()
        assert target == f"{THE[column(noun)]} {NOUNS[noun][0]} no {DIRECT_CLITICS[pronoun]} ve"
    # A determiner after the pronoun tells "gives her the book" from "gives her book to".
    determiner = "the|a|an|some|my|your|his|her|our|their"
    pattern = rf"^the ({NOUN_PATTERN}) gives (him|her|them) (?:{determiner}) "
    for m, target in matching(corpus, pattern):
        noun, pronoun = m.groups()
        indirect = "les" if pronoun == "them" else "le"
        assert target.startswith(f"{THE[column(noun)]} {NOUNS[noun][0]} {indirect} da ")


def test_animate_objects_take_personal_a(corpus):
    for m, target in matching(corpus, rf"\bsees the ({NOUN_PATTERN})$"):
        noun = m[1]
        spanish, _, _, animate = NOUNS[noun]
        article = THE[column(noun)]
        if animate:
            expected = f"ve al {spanish}" if article == "el" else f"ve a {article} {spanish}"
        else:
            expected = f"ve {article} {spanish}"
        assert target.endswith(expected), (m.string, target)
    for m, target in matching(corpus, r"\bof the (boy|man)\b"):
        assert f"del {NOUNS[m[1]][0]}" in target


def test_questions_put_the_verb_first(corpus):
    for m, target in matching(corpus, rf"^does the ({NOUN_PATTERN}) sleep\b"):
        noun = m[1]
        assert target.startswith(f"duerme {THE[column(noun)]} {NOUNS[noun][0]}"), target
    for m, target in matching(corpus, rf"^is the ({NOUN_PATTERN}) ({ADJECTIVE_PATTERN})$"):
        noun, adjective = m.groups()
        spanish_adjective = ADJECTIVES[adjective][column(noun)]
        assert target == f"es {THE[column(noun)]} {NOUNS[noun][0]} {spanish_adjective}"


def test_subordinate_clause_is_the_translation_of_the_clause(corpus):
    pattern = r"^(i|you|he|she|we|they) (know|knows|think|thinks) that (.+)$"
    checked = 0
    for m, target in matching(corpus, pattern):
        subject, verb, clause = m.groups()
        if clause in corpus:  # the clause is also a sentence of its own
            expected = f"{SUBJECT_PRONOUNS[subject]} {CONJUGATIONS[(subject, verb)]} que "
            assert target == expected + corpus[clause]
            checked += 1
    assert checked >= 10


def test_target_word_order_differs_from_source_order_often(corpus):
    # Nouns and adjectives mapped to one id per English lemma; a pair is reordered
    # when these content words come in a different order on the two sides.
    spanish_ids = {form: english for english, (form, *_) in NOUNS.items()}
    for english, forms in ADJECTIVES.items():
        spanish_ids.update({form: english for form in forms})
    reordered = comparable = 0
    for source, target in corpus.items():
        source_ids = [word for word in source.split() if word in NOUNS or word in ADJECTIVES]
        target_ids = [spanish_ids[word] for word in target.split() if word in spanish_ids]
        if sorted(source_ids) == sorted(target_ids):
            comparable += 1
            reordered += source_ids != target_ids
    assert comparable > 0.9 * len(corpus)
    assert reordered / comparable > 0.3


def test_splits_are_disjoint_and_cover_the_corpus():
    splits = builtin_translation_splits(
        num_pairs=2000, seed=5, validation_fraction=0.1, test_fraction=0.05
    )
    assert {name: len(pairs) for name, pairs in splits.items()} == {
        "train": 1700,
        "validation": 200,
        "test": 100,
    }
    sources = {name: {source for source, _ in pairs} for name, pairs in splits.items()}
    assert not sources["train"] & sources["validation"]
    assert not sources["train"] & sources["test"]
    assert not sources["validation"] & sources["test"]
    everything = sorted(pair for pairs in splits.values() for pair in pairs)
    assert everything == sorted(builtin_translation_pairs(num_pairs=2000, seed=5))
    assert splits == builtin_translation_splits(
        num_pairs=2000, seed=5, validation_fraction=0.1, test_fraction=0.05
    )


def test_split_keeps_pairs_of_one_source_together():
    pairs = [(f"source {i % 10}", f"target {i}") for i in range(40)]
    splits = split_translation_pairs(pairs, validation_fraction=0.2, test_fraction=0.2, seed=1)
    assert [len(split) for split in splits.values()] == [24, 8, 8]
    owner = {}
    for name, split in splits.items():
        for source, _ in split:
            assert owner.setdefault(source, name) == name


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"num_pairs": 0}, "Received: num_pairs=0"),
        ({"num_pairs": 2.5}, "Received: num_pairs=2.5"),
        ({"seed": -1}, "Received: seed=-1"),
        ({"validation_fraction": 1.5}, "Received: validation_fraction=1.5"),
        ({"test_fraction": -0.1}, r"Received: test_fraction=-0.1"),
        ({"validation_fraction": 0.5, "test_fraction": 0.5}, "must be below 1"),
    ],
)
def test_bad_arguments_raise(kwargs, message):
    with pytest.raises(ValueError, match=message):
        builtin_translation_splits(**{"num_pairs": 10, **kwargs})
