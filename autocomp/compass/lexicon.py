"""Same-category, non-synonym replacement candidates from WordNet (COMPASS section 3.2: a
replacement is a plausible primitive of the same category, never a synonym).

Each value (object name, attribute, predicate) gets a WordNet synset: the one Visual Genome
records for it (objects' and relationships' `synsets`, attribute_synsets.json), the most
frequent when records disagree, else WordNet's first sense of the word (objects: noun;
attributes: adjective, then verb, then noun; predicates: verb for verb phrases). Two
values are of the same category when

  nouns       they share a lexicographer file (noun.person, noun.artifact, noun.animal...)
              and a hypernym at depth >= 7 (man / woman: adult; shirt / hat: clothing;
              dog / cat: carnivore), or at depth 6 within 3 edges (cup / bowl:
              container); not cup / truck (container too, but 5 edges apart: WordNet files
              wheeled vehicles under containers) nor shirt / car (artifact, depth 4); never
              across a branch of BRANCHES (cup / bicycle and cup / skateboard share
              "container" 3 edges apart, as WordNet files wheeled vehicles under container
              and under conveyance: one under conveyance and one not are apart); and
              neither is a hypernym of the other (dog / animal: "an animal" is still true
              of a dog). Depth is WordNet's max_depth: the longest hypernym path from the
              root, entity.n.01 at 0
  adjectives  the nouns WordNet says they are values of (red, white: hue, value -> color
              property; small, large: size), one hypernym up, or the same head adjective
  verbs       the same lexicographer file (wear: verb.body; hold, sit: verb.contact)
  predicates  verb phrases ("wearing", "parked on") by their verb's file; all other
              predicates (on, in front of, behind...) form one spatial category

A candidate never shares the original's synset, and neither word is a lemma of the other's
synset ("grey" for "gray"). Beside what the image shows, a candidate is also left out when
any sense of it shares, entails or is entailed by any sense of a value there: a hypernym or
hyponym ("guy" where the image has a "man": a guy is a kind of man, so "a guy" may be true
of it; "girl" for a "woman": girl.n.01 is a young woman; "silver" for "metal"), or an
adjective satellite of it. A value with no synset gets none. An
attribute replacement must also have been seen in the dataset on an object of the same
lexicographer file as the one it lands on (no "folded girl": folded was only seen on
artifacts).
"""

from __future__ import annotations

from collections import Counter, defaultdict

from autocomp.compass.render import predicate_form

NOUN_DEPTH = 7  # a shared hypernym this deep, or NEAR_DEPTH within NEAR_EDGES
NEAR_DEPTH, NEAR_EDGES = 6, 3
# Branches a category never straddles: WordNet files wheeled vehicles under container.n.01
# as well as under conveyance, so cup / skateboard and cup / bicycle shared "container" 3
# edges apart; a noun under one of these and a noun not under it are never one category.
BRANCHES = ("conveyance.n.03",)


def _key(word: str) -> str:
    return word.replace("_", " ").lower()


class Lexicon:
    """Synsets of a dataset's values and the same-category test between them."""

    def __init__(self, wordnet, recorded: dict[str, dict[str, Counter]] | None = None):
        self.wn = wordnet
        self.recorded = recorded or {"O": {}, "A": {}, "R": {}}
        self._synset: dict[tuple[str, str], object] = {}
        self._senses: dict[tuple[str, str], list] = {}
        self._reached: dict[tuple[str, str], tuple[frozenset, frozenset]] = {}
        self._cats: dict[tuple[str, str], frozenset] = {}
        self._anc: dict[str, dict[str, int]] = {}

    # ---- which synset a value names ----------------------------------------------------
    def synset(self, primitive: str, value: str):
        key = (primitive, value)
        if key not in self._synset:
            self._synset[key] = self._find(primitive, value)
        return self._synset[key]

    def _find(self, ptype: str, value: str):
        from nltk.corpus.reader.wordnet import WordNetError

        for name, _ in self.recorded.get(ptype, {}).get(value, Counter()).most_common():
            try:
                return self.wn.synset(name)
            except (WordNetError, ValueError):
                continue
        word = value.replace(" ", "_")
        if ptype == "O":
            return self._first(word, "n") or self._first(value.split()[-1], "n")
        if ptype == "A":
            return (self._first(word, "a") or self._first(word, "v")
                    or self._first(word, "n"))
        form = predicate_form(value)
        if form.kind in ("finite", "participle", "passive"):
            return self._first(form.verb, "v")
        return None

    def _first(self, word: str, pos: str):
        found = self.wn.synsets(word, pos)
        if pos == "a":
            found = found or self.wn.synsets(word, "s")
        return found[0] if found else None

    # ---- categories -------------------------------------------------------------------
    def categories(self, primitive: str, value: str) -> frozenset:
        """Labels; two values of one primitive (O, A or R) share a category when their
        labels meet (nouns are compared pairwise instead, see same_category)."""
        key = (primitive, value)
        if key not in self._cats:
            self._cats[key] = frozenset(self._categories(primitive, value))
        return self._cats[key]

    def _categories(self, ptype: str, value: str) -> set:
        if ptype == "R":
            form = predicate_form(value)
            if form.is_preposition:
                return {"spatial"}
            s = self.synset(ptype, value)
            return {f"verb:{s.lexname()}"} if s is not None else set()
        s = self.synset(ptype, value)
        if s is None:
            return set()
        pos = s.pos()
        if pos in ("a", "s"):
            heads = s.similar_tos() if pos == "s" else [s]
            nouns = [n for h in [s, *heads] for n in h.attributes()]
            labels = {f"head:{h.name()}" for h in heads}
            labels |= {f"of:{x.name()}" for n in nouns for x in [n, *n.hypernyms()]}
            return labels
        if pos == "v":
            return {f"verb:{s.lexname()}"}
        return {f"noun:{s.lexname()}"}

    def _ancestors(self, s) -> dict[str, int]:
        """Hypernym closure of a noun synset: name -> its depth (max_depth), cached."""
        if s.name() not in self._anc:
            hyps = s.closure(lambda x: x.hypernyms() + x.instance_hypernyms())
            self._anc[s.name()] = {h.name(): h.max_depth() for h in hyps}
        return self._anc[s.name()]

    def keys(self, primitive: str, value: str) -> frozenset:
        """Index keys: two values of the same category share one (nouns: a hypernym at
        depth >= NEAR_DEPTH; others: a category label)."""
        s = self.synset(primitive, value)
        if primitive != "A" and s is not None and s.pos() == "n":
            return frozenset(n for n, d in self._ancestors(s).items() if d >= NEAR_DEPTH)
        return self.categories(primitive, value)

    def same_category(self, ptype: str, a: str, b: str) -> bool:
        if not self.categories(ptype, a) & self.categories(ptype, b):
            return False
        sa, sb = self.synset(ptype, a), self.synset(ptype, b)
        if sa is None or sb is None or sa.pos() != "n" or sb.pos() != "n":
            return True
        if ptype == "A":  # attribute nouns (glass, leather): the lexicographer file is enough
            return True
        ha, hb = self._ancestors(sa), self._ancestors(sb)
        if sa.name() in hb or sb.name() in ha:  # one is a ptype of the other
            return False
        if any((b in ha) != (b in hb) for b in BRANCHES):  # cup / bicycle: "container"
            return False
        depth = max((ha[n] for n in ha.keys() & hb.keys()), default=0)
        return depth >= NOUN_DEPTH or (depth >= NEAR_DEPTH and
                                       (sa.shortest_path_distance(sb) or 99) <= NEAR_EDGES)

    def synonyms(self, primitive: str, a: str, b: str) -> bool:
        """Same synset, or one word is a lemma of the other's synset."""
        if _key(a) == _key(b):
            return True
        sa, sb = self.synset(primitive, a), self.synset(primitive, b)
        if sa is not None and sb is not None and sa == sb:
            return True
        return any(s is not None and _key(w) in {_key(n) for n in s.lemma_names()}
                   for s, w in ((sa, b), (sb, a)))

    def entails(self, primitive: str, a: str, b: str) -> bool:
        """Could a caption naming `a` be true of something that is `b`, or the other way,
        in ANY of their senses: synonyms, a shared sense, one sense a hypernym of the other
        ("guy" is a kind of "man"; girl.n.01 is a young woman, so "a girl" may be the woman
        the image shows; silver is a metal), or an adjective satellite of the other."""
        if self.synonyms(primitive, a, b):
            return True
        (names_a, reach_a) = self._reach(primitive, a)
        (names_b, reach_b) = self._reach(primitive, b)
        return bool(names_a & reach_b) or bool(names_b & reach_a)

    def _reach(self, primitive: str, value: str) -> tuple[frozenset, frozenset]:
        """(the names of a value's senses, those names with every hypernym of its noun and
        verb senses and the adjectives its senses are satellites of or have as
        satellites): a sense of one value in the other's reach is an entailment."""
        key = (primitive, value)
        if key not in self._reached:
            senses = self.senses(primitive, value)
            names = frozenset(x.name() for x in senses)
            reach = set(names)
            for x in senses:
                reach.update(y.name() for y in x.similar_tos())
                if x.pos() in ("n", "v"):
                    reach.update(self._ancestors(x))
            self._reached[key] = (names, frozenset(reach))
        return self._reached[key]

    def senses(self, primitive: str, value: str) -> list:
        """Every WordNet sense of a value's word (its own synset first): objects' nouns,
        attributes' adjectives (satellites too), nouns and verbs, verbal predicates'
        verbs."""
        key = (primitive, value)
        if key not in self._senses:
            own = self.synset(primitive, value)
            word = value.replace(" ", "_")
            pos = {"O": ("n",), "A": ("a", "s", "n", "v"), "R": ("v",)}[primitive]
            if primitive == "R":
                form = predicate_form(value)
                word = form.verb if form.kind in ("finite", "participle", "passive") else None
            found = [x for p in pos for x in self.wn.synsets(word, p)] if word else []
            self._senses[key] = list(dict.fromkeys(x for x in (own, *found) if x is not None))
        return self._senses[key]

    def opposite(self, primitive: str, a: str, b: str) -> bool:
        """WordNet antonyms (big / small, open / closed), through the head adjective of a
        satellite: a replacement by its antonym contradicts the original."""
        sa, sb = self.synset(primitive, a), self.synset(primitive, b)
        if sa is None or sb is None:
            return False

        def heads(s):
            return [s, *(s.similar_tos() if s.pos() == "s" else [])]

        mine = {x.synset().name() for h in heads(sa) for lem in h.lemmas()
                for x in lem.antonyms()}
        return bool(mine & {h.name() for h in heads(sb)})

    def candidates(self, primitive: str, value: str, vocabulary) -> list[str]:
        """The vocabulary's values of the same category, synonyms left out, sorted."""
        return _Index(self, primitive, vocabulary).candidates(self, primitive, value)


class _Index:
    """Values by index key, so a value is compared only with those sharing a key (a deep
    hypernym or a category label), not with the whole vocabulary."""

    def __init__(self, lexicon: Lexicon, primitive: str, vocabulary):
        self.by_key: dict[str, set] = defaultdict(set)
        for v in vocabulary:
            for k in lexicon.keys(primitive, v):
                self.by_key[k].add(v)

    def candidates(self, lexicon: Lexicon, primitive: str, value: str) -> list[str]:
        pool = set().union(*(self.by_key.get(k, ()) for k in lexicon.keys(primitive, value)))
        return sorted(v for v in pool if v != value and lexicon.same_category(primitive, value, v)
                      and not lexicon.synonyms(primitive, value, v))


class SynsetCandidates:
    """A Replacer's `propose`: same-category, non-synonym values of the dataset vocabulary.
    `hosts`: attribute -> the object names it was seen on (for `plausible`)."""

    name = "wordnet"

    def __init__(self, lexicon: Lexicon, vocab: dict[str, Counter],
                 hosts: dict[str, set] | None = None):
        self.lexicon, self.vocab, self.hosts = lexicon, vocab, hosts
        self._host_files: dict[str, set] = {}
        self._index: dict[str, _Index] = {}

    def __call__(self, primitive: str, value: str) -> list[str]:
        if primitive not in self._index:
            self._index[primitive] = _Index(self.lexicon, primitive, self.vocab[primitive])
        return self._index[primitive].candidates(self.lexicon, primitive, value)

    def same_meaning(self, primitive: str, a: str, b: str) -> bool:
        """Left out beside what the image shows: synonyms, hypernyms and hyponyms."""
        return self.lexicon.entails(primitive, a, b)

    def opposite(self, primitive: str, a: str, b: str) -> bool:
        return primitive == "A" and self.lexicon.opposite(primitive, a, b)

    def _file(self, name: str) -> str | None:
        s = self.lexicon.synset("O", name)
        return s.lexname() if s is not None else None

    def plausible(self, primitive: str, candidate: str, graph, prim: tuple) -> bool:
        """An attribute candidate was seen on an object of the same lexicographer file."""
        if primitive != "A" or self.hosts is None:
            return True
        if candidate not in self._host_files:
            self._host_files[candidate] = {self._file(h) for h in self.hosts.get(candidate, ())}
        return self._file(graph.objects[prim[1]].name) in self._host_files[candidate]


def attribute_hosts(graphs) -> dict[str, set]:
    """attribute -> names of the objects that carry it."""
    out: dict[str, set] = defaultdict(set)
    for g in graphs:
        for o in g.objects:
            for a in o.attributes:
                out[a].add(o.name)
    return dict(out)


def recorded_synsets() -> dict[str, dict[str, Counter]]:
    return {"O": defaultdict(Counter), "A": defaultdict(Counter), "R": defaultdict(Counter)}
