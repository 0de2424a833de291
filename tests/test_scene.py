import pytest

from autocomp.core.scene import Object, Relation, SceneGraph, attribute_graph, chain_graph


def test_counts_and_chain():
    g = chain_graph(["chair", "lamp", "cup"], ["under", "above"])
    assert g.counts == {"n_O": 3, "n_A": 0, "n_R": 2, "total": 5}
    assert g.is_chain()
    a = attribute_graph(["chair", "lamp"], ["red", "blue"])
    assert a.counts == {"n_O": 2, "n_A": 2, "n_R": 0, "total": 4}
    assert not a.relations


def test_visual_genome_subgraph_round_trip():
    # several attributes on one object, relations that do not form a chain
    g = SceneGraph(
        (Object("sofa", ("dark", "brown")), Object("room"), Object("ceiling", ("white",)),
         Object("lamp")),
        (Relation(0, "in", 1), Relation(2, "of", 1), Relation(3, "above", 0)),
    )
    assert g.counts == {"n_O": 4, "n_A": 3, "n_R": 3, "total": 10}
    assert not g.is_chain()
    back = SceneGraph.from_json(g.to_json())
    assert back == g and back.id == g.id


def test_id_is_stable_and_content_based():
    g1 = attribute_graph(["chair", "lamp"], ["red", "blue"])
    g2 = attribute_graph(["chair", "lamp"], ["red", "blue"])
    g3 = attribute_graph(["chair", "lamp"], ["blue", "red"])
    assert g1.id == g2.id != g3.id
    # a hash of the canonical JSON: the same in every process and on every machine
    assert g1.id == "69b5feb7332387c0"


def test_bad_relations_rejected():
    with pytest.raises(ValueError, match="outside"):
        SceneGraph((Object("a"),), (Relation(0, "under", 1),))
    with pytest.raises(ValueError, match="itself"):
        SceneGraph((Object("a"), Object("b")), (Relation(1, "under", 1),))


def test_meaning_key_ignores_order_and_reads_inverses():
    inv = {"under": "above", "above": "under"}
    a = attribute_graph(["chair", "lamp"], ["red", "blue"])
    b = attribute_graph(["lamp", "chair"], ["blue", "red"])
    c = attribute_graph(["chair", "lamp"], ["blue", "red"])
    assert a.meaning_key() == b.meaning_key() != c.meaning_key()
    fwd = chain_graph(["chair", "lamp", "cup"], ["under", "above"])
    back = chain_graph(["cup", "lamp", "chair"], ["under", "above"])
    assert fwd.meaning_key(inv) == back.meaning_key(inv)
    assert fwd.meaning_key() != back.meaning_key()  # without inverses they differ
    other = chain_graph(["lamp", "chair", "cup"], ["under", "above"])
    assert fwd.meaning_key(inv) != other.meaning_key(inv)
