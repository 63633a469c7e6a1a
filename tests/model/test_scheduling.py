"""The scheduling model against Kubernetes' own rules.

Every table row is a case upstream documents or tests: `Toleration.ToleratesTaint`
(k8s.io/api/core/v1/toleration.go), `ValidateTolerations` / `ValidateNodeSelectorRequirement`
(pkg/apis/core/validation), `labels.Requirement.Matches` (apimachinery/pkg/labels/selector.go),
`nodeaffinity.NodeSelector` (component-helpers), `IsQualifiedName` / `IsValidLabelValue` /
`IsDNS1123Label` / `IsDNS1123Subdomain` / `IsDNS1035Label` (apimachinery/pkg/util/validation) and
`resource.ParseQuantity` intersected with the CRDs' quantity pattern.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from components.model.errors import InputError
from components.model.scheduling import (
    GPU_RESOURCE,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Placement,
    PreferredSchedulingTerm,
    Taint,
    Toleration,
    extended_resource_tolerations,
    parse_quantity,
    untolerated,
    validate_dns1035_label,
    validate_dns1123_label,
    validate_dns1123_subdomain,
    validate_label_key,
    validate_label_value,
    validate_labels,
    validate_quantity,
)

FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def error_text(fn, *args, **kwargs) -> str:
    with pytest.raises(InputError) as info:
        fn(*args, **kwargs)
    return str(info.value)


# ---------------------------------------------------------------------------------------------
# Tolerations vs taints (ToleratesTaint)
# ---------------------------------------------------------------------------------------------

NS, PNS, NE = "NoSchedule", "PreferNoSchedule", "NoExecute"


@pytest.mark.parametrize(
    ("toleration", "taint", "tolerated"),
    [
        # Equal: same key, value and effect.
        (Toleration("key1", "Equal", "value1", NS), Taint("key1", "value1", NS), True),
        (Toleration("key1", "Equal", "value1", NS), Taint("key1", "value2", NS), False),
        (Toleration("key1", "Equal", "value1", NS), Taint("key2", "value1", NS), False),
        # Exists: any value of that key.
        (Toleration("key1", "Exists", "", NS), Taint("key1", "value1", NS), True),
        (Toleration("key1", "Exists", "", NS), Taint("key1", "", NS), True),
        (Toleration("key1", "Exists", "", NS), Taint("key2", "value1", NS), False),
        # Effect must equal the taint's, unless empty: empty matches every effect.
        (Toleration("key1", "Equal", "value1", NS), Taint("key1", "value1", NE), False),
        (Toleration("key1", "Equal", "value1", NE), Taint("key1", "value1", NE), True),
        (Toleration("key1", "Equal", "value1", ""), Taint("key1", "value1", NS), True),
        (Toleration("key1", "Equal", "value1", ""), Taint("key1", "value1", PNS), True),
        (Toleration("key1", "Equal", "value1", ""), Taint("key1", "value1", NE), True),
        (Toleration("key1", "Exists"), Taint("key1", "v", NE), True),
        # Empty key with Exists tolerates every taint (with an effect: every taint of it).
        (Toleration("", "Exists"), Taint("anything", "v", NS), True),
        (Toleration("", "Exists"), Taint("example.com/x", "", NE), True),
        (Toleration("", "Exists", "", NE), Taint("anything", "v", NE), True),
        (Toleration("", "Exists", "", NE), Taint("anything", "v", NS), False),
        # Equal is the default operator; an empty operator means Equal too.
        (Toleration("key1", value="value1"), Taint("key1", "value1", NS), True),
        (Toleration("key1", value="value1"), Taint("key1", "other", NS), False),
        (Toleration("key1", "", "value1"), Taint("key1", "value1", NS), True),
        # Equal with no value matches only a taint with no value.
        (Toleration("key1"), Taint("key1", "", NS), True),
        (Toleration("key1"), Taint("key1", "v", NS), False),
        # The GPU taints of the seeds.
        (Toleration(GPU_RESOURCE, "Exists", "", NS), Taint(GPU_RESOURCE, "present", NS), True),
        (
            Toleration("seldon-gpu-srv", "Equal", "true", NS),
            Taint("seldon-gpu-srv", "true", NS),
            True,
        ),
    ],
)
def test_tolerates_taint(toleration, taint, tolerated):
    assert toleration.tolerates(taint) is tolerated


def test_defaults_and_none_normalised():
    t = Toleration("k", None, None, None, None)
    assert (t.operator, t.value, t.effect, t.toleration_seconds) == ("Equal", "", "", None)
    assert Taint("k", None, None) == Taint("k", "", NS)


@pytest.mark.parametrize(
    ("kwargs", "pieces"),
    [
        # An empty key needs Exists (ValidateTolerations).
        ({"key": "", "operator": "Equal"}, ["empty key", "'Equal'", "allowed: operator 'Exists'"]),
        ({"key": ""}, ["empty key", "allowed: operator 'Exists' with no key"]),
        # Exists takes no value.
        (
            {"key": "k", "operator": "Exists", "value": "v"},
            ["'Exists' and value 'v'", "takes no value", "allowed: operator 'Exists' without"],
        ),
        ({"operator": "Exists", "value": "v"}, ["every key", "takes no value"]),
        # tolerationSeconds only with NoExecute.
        (
            {"key": "k", "operator": "Exists", "effect": NS, "toleration_seconds": 30},
            ["tolerationSeconds is 30", "'NoSchedule'", "allowed: tolerationSeconds only with"],
        ),
        (
            {"key": "k", "operator": "Exists", "toleration_seconds": 30},
            ["tolerationSeconds is 30", "empty", "'NoExecute'"],
        ),
        (
            {"key": "k", "operator": "Exists", "effect": NE, "toleration_seconds": "30"},
            ["'30' is not an integer"],
        ),
        # Only Equal and Exists.
        ({"key": "k", "operator": "In"}, ["'In' is not valid", "allowed: Equal, Exists"]),
        ({"key": "k", "operator": "exists"}, ["'exists' is not valid"]),
        # Effects are Kubernetes' spelling.
        (
            {"key": "k", "operator": "Exists", "effect": "NO_SCHEDULE"},
            ["'NO_SCHEDULE'", "cloud API's spelling of NoSchedule", "NoExecute"],
        ),
        ({"key": "k", "operator": "Exists", "effect": "NoScheduled"}, ["'NoScheduled'"]),
        # Keys are qualified names, Equal values label values.
        ({"key": "-k", "operator": "Exists"}, ["toleration key", "'-k'", "allowed:"]),
        ({"key": "k", "value": "has space"}, ["'has space'", "not a valid label value"]),
        ({"key": "k", "value": "x" * 64}, ["64 characters long (at most 63)"]),
        ({"key": "k", "value": True}, ["True is not a string", "quote"]),
    ],
)
def test_toleration_validation(kwargs, pieces):
    text = error_text(Toleration, **kwargs)
    for piece in pieces:
        assert piece in text


def test_toleration_seconds_with_no_execute_is_valid():
    t = Toleration("node.kubernetes.io/unreachable", "Exists", "", NE, 300)
    assert t.to_dict() == {
        "key": "node.kubernetes.io/unreachable",
        "operator": "Exists",
        "effect": NE,
        "tolerationSeconds": 300,
    }
    assert Toleration.from_dict(t.to_dict()) == t
    assert Toleration.from_dict({**t.to_dict(), "tolerationSeconds": 300.0}) == t  # via Pulumi


@pytest.mark.parametrize(
    ("args", "pieces"),
    [
        (
            ("k", "v", ""),
            ["effect '' is empty", "allowed: NoSchedule, PreferNoSchedule, NoExecute"],
        ),
        (("k", "v", "NO_EXECUTE"), ["'NO_EXECUTE'", "spelling of NoExecute"]),
        (("k", "v", "Whatever"), ["'Whatever' is not a Kubernetes effect"]),
        (("", "v", NS), ["taint key", "empty"]),
        (("a/b/c", "v", NS), ["'a/b/c' has more than one '/'"]),
        (("k", "-v", NS), ["taint k value", "'-v'"]),
    ],
)
def test_taint_validation(args, pieces):
    text = error_text(Taint, *args)
    for piece in pieces:
        assert piece in text


def test_taint_forms():
    t = Taint.parse("seldon-gpu-srv=true:NoSchedule")
    assert t == Taint("seldon-gpu-srv", "true", NS)
    assert Taint.parse("nvidia.com/gpu:NoExecute") == Taint(GPU_RESOURCE, "", NE)
    assert str(t) == "seldon-gpu-srv=true:NoSchedule"
    assert t.to_cloud() == {"key": "seldon-gpu-srv", "value": "true", "effect": "NO_SCHEDULE"}
    assert Taint.from_dict(t.to_cloud()) == t
    assert Taint.from_dict({"key": "k", "effect": NE}).to_dict() == {"key": "k", "effect": NE}
    assert "has no effect" in error_text(Taint.parse, "k=v")
    assert Taint.from_dict({"key": "k", "value": "v"}) == Taint("k", "v", NS)  # the default
    assert "effect '' is empty" in error_text(Taint.from_dict, {"key": "k", "effect": ""})
    assert "has no key" in error_text(Taint.from_dict, {"effect": NS})


def test_prefer_no_schedule_never_filters_and_both_others_do():
    taints = [Taint("a", "1", PNS), Taint("b", "1", NS), Taint("c", "1", NE)]
    assert untolerated(taints, []) == taints[1:]
    assert untolerated(taints, [Toleration("b", "Exists")]) == [taints[2]]
    assert untolerated(taints, [Toleration("", "Exists")]) == []


@pytest.mark.parametrize(
    ("resources", "keys"),
    [
        ([GPU_RESOURCE, "cpu", "memory"], [GPU_RESOURCE]),
        (
            ["example.com/foo", "amd.com/gpu", GPU_RESOURCE],
            ["amd.com/gpu", "example.com/foo", GPU_RESOURCE],
        ),
        (["kubernetes.io/foo", "foo.kubernetes.io/bar", "ephemeral-storage"], []),
        (["requests.example.com/foo", "hugepages-2Mi"], []),
    ],
)
def test_extended_resource_tolerations(resources, keys):
    tols = extended_resource_tolerations(resources)
    assert [t.key for t in tols] == keys
    assert all(t.operator == "Exists" and t.effect == NS and not t.value for t in tols)


# ---------------------------------------------------------------------------------------------
# Node selector requirements (labels.Requirement.Matches) and their validation
# ---------------------------------------------------------------------------------------------


def req(key, op, *values):
    return NodeSelectorRequirement(key, op, values)


@pytest.mark.parametrize(
    ("requirement", "labels", "matched"),
    [
        (req("k", "In", "a", "b"), {"k": "b"}, True),
        (req("k", "In", "a", "b"), {"k": "c"}, False),
        (req("k", "In", "a"), {}, False),
        (req("k", "In", ""), {"k": ""}, True),  # the empty string is a valid value
        # NotIn matches a node without the label.
        (req("k", "NotIn", "a"), {}, True),
        (req("k", "NotIn", "a"), {"k": "b"}, True),
        (req("k", "NotIn", "a"), {"k": "a"}, False),
        (req("k", "Exists"), {"k": ""}, True),
        (req("k", "Exists"), {"other": "x"}, False),
        # DoesNotExist matches a node without the label.
        (req("k", "DoesNotExist"), {}, True),
        (req("k", "DoesNotExist"), {"k": "x"}, False),
        # Gt / Lt: both sides base-10 int64 (strconv.ParseInt(s, 10, 64)).
        (req("k", "Gt", "1"), {"k": "2"}, True),
        (req("k", "Gt", "1"), {"k": "1"}, False),
        (req("k", "Gt", "1"), {"k": "0"}, False),
        (req("k", "Lt", "1"), {"k": "0"}, True),
        (req("k", "Lt", "1"), {"k": "1"}, False),
        (req("k", "Lt", "0"), {"k": "-5"}, True),  # ParseInt takes a sign
        (req("k", "Gt", "4"), {"k": "+5"}, True),
        (req("k", "Gt", "6"), {"k": "007"}, True),  # leading zeros are fine
        (req("k", "Gt", "75000"), {"k": "81920"}, True),
        # Absent or not an integer: no match, for Gt and Lt alike.
        (req("k", "Gt", "1"), {}, False),
        (req("k", "Lt", "1"), {}, False),
        (req("k", "Gt", "1"), {"k": "abc"}, False),
        (req("k", "Lt", "100"), {"k": "1.5"}, False),
        (req("k", "Lt", "100"), {"k": ""}, False),
        (req("k", "Lt", "100"), {"k": "1_0"}, False),  # underscores only with base 0
        (req("k", "Lt", "100"), {"k": "0x10"}, False),
        (req("k", "Lt", "100"), {"k": " 5"}, False),
        (req("k", "Lt", "100"), {"k": "5\n"}, False),
        (req("k", "Lt", "100"), {"k": "\u0665"}, False),  # not an ASCII digit
        (req("k", "Gt", "0"), {"k": str(INT64_MAX)}, True),
        (req("k", "Gt", "0"), {"k": str(INT64_MAX + 1)}, False),  # out of range: error
        (req("k", "Lt", "0"), {"k": str(INT64_MIN)}, True),
        (req("k", "Lt", "0"), {"k": str(INT64_MIN - 1)}, False),
    ],
)
def test_requirement_matches(requirement, labels, matched):
    assert requirement.matches(labels) is matched


@pytest.mark.parametrize(
    ("args", "pieces"),
    [
        (("k", "In", ()), ["operator In on 'k' has no values", "allowed: one or more values"]),
        (("k", "NotIn", ()), ["operator NotIn", "at least one"]),
        (
            ("k", "Exists", ("a",)),
            ["operator Exists on 'k' has values ['a']", "allowed: no values"],
        ),
        (("k", "DoesNotExist", ("a",)), ["DoesNotExist", "takes none"]),
        (("k", "Gt", ()), ["operator Gt on 'k' has 0 values", "exactly one"]),
        (("k", "Lt", ("1", "2")), ["has 2 values ['1', '2']", "exactly one"]),
        (("k", "Gt", ("abc",)), ["needs an integer, got 'abc'", "base-10 64-bit integer"]),
        (("k", "Gt", ("1.5",)), ["got '1.5'"]),
        (("k", "Gt", (str(INT64_MAX + 1),)), [f"got '{INT64_MAX + 1}'"]),
        (("k", "Lt", ("-1",)), ["value '-1'", "signed number", "unsigned base-10 integer"]),
        (("k", "Equals", ("a",)), ["'Equals' on 'k' is not valid", "In, NotIn, Exists"]),
        (("k", "in", ("a",)), ["'in'"]),
        (("-k", "In", ("a",)), ["node selector requirement key", "'-k'"]),
        (("k", "In", ("bad value",)), ["a value of k In", "'bad value'"]),
        (("k", "In", (1,)), ["1 is not a string"]),
        (("k", "In", "abc"), ["the string 'abc', not a list", "['abc']"]),
    ],
)
def test_requirement_validation(args, pieces):
    text = error_text(NodeSelectorRequirement, *args)
    for piece in pieces:
        assert piece in text


def test_requirement_exactly_int64_bounds_are_valid():
    assert req("k", "Gt", str(INT64_MAX)).matches({"k": "1"}) is False
    assert req("k", "Lt", "0").to_dict() == {"key": "k", "operator": "Lt", "values": ["0"]}


# ---------------------------------------------------------------------------------------------
# Required node affinity: terms ORed, expressions ANDed, empty term / list match nothing
# ---------------------------------------------------------------------------------------------

A = req("a", "In", "1")
B = req("b", "In", "1")
NODE_AB = {"a": "1", "b": "1"}
NODE_A = {"a": "1"}


@pytest.mark.parametrize(
    ("required", "labels", "matched"),
    [
        (None, {}, True),  # no requirement
        ((), NODE_AB, False),  # an empty term list matches nothing
        ((NodeSelectorTerm(),), NODE_AB, False),  # an empty term matches nothing
        ((NodeSelectorTerm(), NodeSelectorTerm((A,))), NODE_A, True),  # ... ORed with others
        ((NodeSelectorTerm((A, B)),), NODE_AB, True),  # expressions ANDed
        ((NodeSelectorTerm((A, B)),), NODE_A, False),
        ((NodeSelectorTerm((A,)), NodeSelectorTerm((B,))), {"b": "1"}, True),  # terms ORed
        ((NodeSelectorTerm((A,)), NodeSelectorTerm((B,))), {"c": "1"}, False),
    ],
)
def test_required_affinity(required, labels, matched):
    assert NodeAffinity(required).matches(labels) is matched
    placement = Placement(node_affinity=NodeAffinity(required))
    assert placement.admits(labels, []) is matched


def test_match_fields_node_name():
    term = NodeSelectorTerm(match_fields=(req("metadata.name", "In", "node-1"),))
    assert term.matches({}, "node-1") is True
    assert term.matches({}, "node-2") is False
    # A node the graph does not name (an autoscaler's, named by the cloud at boot) is no node
    # a pin by name lands on (the scheduler differential's AKS cases, seed 715608022).
    assert term.matches({}, None) is False
    not_in = NodeSelectorTerm((A,), (req("metadata.name", "NotIn", "node-1"),))
    assert not_in.matches(NODE_A, "node-2") is True
    assert not_in.matches(NODE_A, "node-1") is False
    assert not_in.matches(NODE_A, None) is True
    assert not_in.matches({}, None) is False  # its expression still decides
    assert "only 'metadata.name'" in error_text(
        NodeSelectorTerm, match_fields=(req("metadata.uid", "In", "x"),)
    )
    assert "exactly one node name" in error_text(
        NodeSelectorTerm, match_fields=(req("metadata.name", "In", "a", "b"),)
    )


def test_preferred_terms_never_filter_and_weight_is_checked():
    aff = NodeAffinity(preferred=(PreferredSchedulingTerm(50, NodeSelectorTerm((A,))),))
    assert Placement(node_affinity=aff).admits({}, []) is True
    for weight in (0, 101, True, "50"):
        assert "allowed: an integer 1..100" in error_text(
            PreferredSchedulingTerm, weight, NodeSelectorTerm((A,))
        )


# ---------------------------------------------------------------------------------------------
# Labels and names (k8s.io/apimachinery/pkg/util/validation)
# ---------------------------------------------------------------------------------------------

VALID_KEYS = [
    "pool",
    "a",
    "1",
    "A_b.c-d",
    "cloud.google.com/gke-accelerator",
    "cloud.google.com/gke-accelerator-count",
    "nvidia.com/gpu.product",
    "k8s.amazonaws.com/accelerator",
    "feature.node.kubernetes.io/pci-10.present",
    "example.com/" + "n" * 63,
    "a" * 253 + "/name",
]
INVALID_KEYS = [
    ("", "empty"),
    ("/name", "empty prefix"),
    ("prefix/", "empty name"),
    ("a/b/c", "more than one '/'"),
    ("-a", "not a valid label key"),
    ("a-", "not a valid label key"),
    ("has space", "not a valid label key"),
    ("Example.com/x", "not a lowercase DNS subdomain"),
    ("exa_mple.com/x", "not a lowercase DNS subdomain"),
    ("n" * 64, "64 characters long (at most 63)"),
    ("a" * 254 + "/name", "254 characters long (at most 253)"),
    ("pool\n", "not a valid label key"),
]


@pytest.mark.parametrize("key", VALID_KEYS)
def test_valid_label_keys(key):
    assert validate_label_key(key) == key


@pytest.mark.parametrize(("key", "piece"), INVALID_KEYS)
def test_invalid_label_keys(key, piece):
    text = error_text(validate_label_key, key)
    assert piece in text
    assert "allowed: an optional DNS subdomain prefix" in text


@pytest.mark.parametrize(
    "value", ["", "infer-srv", "true", "2", "A100-SXM4-40GB-MIG-1g.5gb-SHARED", "v" * 63, "a_b"]
)
def test_valid_label_values(value):
    assert validate_label_value(value) == value


@pytest.mark.parametrize(
    ("value", "piece"),
    [
        ("v" * 64, "64 characters long (at most 63)"),
        ("-a", "not a valid label value"),
        ("a.", "not a valid label value"),
        ("a b", "not a valid label value"),
        ("a/b", "not a valid label value"),
        ("true\n", "not a valid label value"),
        (True, "True is not a string (quote numbers and booleans in YAML)"),
        (2, "2 is not a string"),
    ],
)
def test_invalid_label_values(value, piece):
    text = error_text(validate_label_value, value)
    assert piece in text
    assert "allowed: empty, or at most 63 characters" in text


def test_validate_labels_names_the_key():
    assert validate_labels({"pool": "infer-srv"}) == {"pool": "infer-srv"}
    text = error_text(validate_labels, {"pool": "infer srv"})
    assert text.startswith("pool: 'infer srv' is not a valid label value")


@pytest.mark.parametrize("name", ["my-name", "123-abc", "a", "0", "n" * 63])
def test_dns1123_label_valid(name):
    assert validate_dns1123_label(name) == name


@pytest.mark.parametrize(
    ("name", "piece"),
    [
        ("", "the name is empty"),
        ("My-Name", "uppercase"),
        ("my_name", "'_'"),
        ("a.b", "has no dots"),
        ("-abc", "start and end"),
        ("abc-", "start and end"),
        ("n" * 64, "64 characters long (at most 63)"),
        ("abc\n", "'\\n'"),
        (None, "None is not a string"),
    ],
)
def test_dns1123_label_invalid(name, piece):
    text = error_text(validate_dns1123_label, name)
    assert piece in text
    assert "(DNS-1123 label)" in text


def test_dns1123_label_custom_max_length():
    assert "at most 40" in error_text(validate_dns1123_label, "n" * 41, 40)


@pytest.mark.parametrize("name", ["example.com", "a.b-c.d", "a", "1.2.3", "a" * 253])
def test_dns1123_subdomain_valid(name):
    assert validate_dns1123_subdomain(name) == name


@pytest.mark.parametrize(
    ("name", "piece"),
    [
        ("Example.com", "uppercase"),
        ("a..b", "start and end"),
        (".a", "start and end"),
        ("a.", "start and end"),
        ("a_b.com", "'_'"),
        ("a" * 254, "254 characters long (at most 253)"),
        ("", "empty"),
    ],
)
def test_dns1123_subdomain_invalid(name, piece):
    text = error_text(validate_dns1123_subdomain, name)
    assert piece in text
    assert "allowed: at most 253 characters" in text


@pytest.mark.parametrize("name", ["my-name", "abc-123", "a"])
def test_dns1035_label_valid(name):
    assert validate_dns1035_label(name) == name


@pytest.mark.parametrize(
    ("name", "piece"),
    [
        ("123-abc", "start with a letter"),
        ("1", "start with a letter"),
        ("abc-", "start and end"),
        ("Abc", "uppercase"),
        ("a.b", "no dots"),
        ("n" * 64, "at most 63"),
    ],
)
def test_dns1035_label_invalid(name, piece):
    text = error_text(validate_dns1035_label, name)
    assert piece in text
    assert "(DNS-1035 label)" in text


# ---------------------------------------------------------------------------------------------
# Quantities (resource.ParseQuantity and the CRD pattern)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("500m", Decimal("0.5")),
        ("16Gi", Decimal(16 * 2**30)),
        ("360Gi", Decimal(360 * 2**30)),
        ("1e3", Decimal(1000)),
        ("1E3", Decimal(1000)),
        ("1e-3", Decimal("0.001")),
        (".5", Decimal("0.5")),
        ("1.", Decimal(1)),
        ("1.5Gi", Decimal(3 * 2**29)),
        ("+2", Decimal(2)),
        ("0", Decimal(0)),
        ("-0", Decimal(0)),  # zero, not negative
        ("007", Decimal(7)),
        ("2k", Decimal(2000)),
        ("1M", Decimal(10**6)),
        ("1G", Decimal(10**9)),
        ("1T", Decimal(10**12)),
        ("1P", Decimal(10**15)),
        ("1E", Decimal(10**18)),  # a lone E is exa
        ("1Ei", Decimal(2**60)),
        ("1Ki", Decimal(1024)),
        ("100n", Decimal("1e-7")),
        ("100u", Decimal("1e-4")),
        ("0.1n", Decimal("1e-9")),  # finer than 1n rounds up
        (40, Decimal(40)),
        (1, Decimal(1)),
    ],
)
def test_valid_quantities(text, value):
    assert parse_quantity(text) == value
    assert validate_quantity(text) == str(text)


@pytest.mark.parametrize(
    ("value", "pieces"),
    [
        ("4GB", ["'4GB' is not a valid quantity", "write '4G' or '4Gi'"]),
        ("16GiB", ["write '16Gi'"]),
        ("1K", ["kilo is a lowercase k"]),
        ("-1", ["'-1' is negative"]),
        ("-500m", ["is negative"]),
        (-1, ["-1 is negative"]),
        ("1.5.2", ["'1.5.2' is not a valid quantity"]),
        (" 1", ["spaces around it"]),
        ("1 ", ["spaces around it"]),
        ("1\n", ["not a valid quantity"]),
        ("", ["'' is not a valid quantity"]),
        ("+", ["not a valid quantity"]),  # ParseQuantity reads 0, the CRD pattern refuses
        (".", ["not a valid quantity"]),
        ("1e", ["not a valid quantity"]),
        ("1e1.5", ["not a valid quantity"]),  # the pattern allows, ParseQuantity refuses
        ("1mi", ["not a valid quantity"]),
        ("1Ki3", ["not a valid quantity"]),
        ("abc", ["not a valid quantity"]),
        (0.5, ["0.5 is a bare number with a fraction", "'500m'"]),
        (2.0, ["2.0 is a bare number", "write 2 or '2'"]),
        (float("inf"), ["inf is not a quantity"]),
        (True, ["True is not a quantity"]),
        (None, ["None is not a quantity"]),
        ("1e9999999999", ["exponent out of range"]),
    ],
)
def test_invalid_quantities(value, pieces):
    text = error_text(parse_quantity, value)
    for piece in pieces:
        assert piece in text
    if "exponent" not in text:
        assert "allowed: a Kubernetes quantity" in text


# ---------------------------------------------------------------------------------------------
# Placement: seeds, forms, building
# ---------------------------------------------------------------------------------------------

SEED004_NODE_LABELS = {
    "pool": "infer-srv",
    "nvidia.com/gpu.product": "A100-SXM4-40GB-MIG-1g.5gb-SHARED",
    "cloud.google.com/gke-accelerator": "nvidia-a100-80gb",
    "cloud.google.com/gke-accelerator-count": "2",
}
SEED004_TAINT = Taint("seldon-gpu-srv", "true", NS)
SEED004_TOLERATIONS = [
    {"effect": "NoSchedule", "key": "seldon-gpu-srv", "operator": "Equal", "value": "true"}
]
# The three Server podSpecs of seed 004 (placement keys only).
SEED004_NODE_SELECTOR = {
    "nodeSelector": {"pool": "infer-srv", "cloud.google.com/gke-accelerator": "nvidia-a100-80gb"},
    "tolerations": SEED004_TOLERATIONS,
}
SEED004_AFFINITY_IN = {
    "affinity": {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "pool", "operator": "In", "values": ["infer-srv"]},
                            {
                                "key": "cloud.google.com/gke-accelerator",
                                "operator": "In",
                                "values": ["nvidia-a100-80gb"],
                            },
                        ]
                    }
                ]
            }
        }
    },
    "tolerations": SEED004_TOLERATIONS,
}
SEED004_AFFINITY_GT = {
    "affinity": {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {
                                "key": "cloud.google.com/gke-accelerator-count",
                                "operator": "Gt",
                                "values": ["1"],
                            },
                            {
                                "key": "gpu.gpu-vendor.example/installed-memory",
                                "operator": "Gt",
                                "values": ["75000"],
                            },
                            {
                                "key": "feature.node.kubernetes.io/pci-10.present",
                                "operator": "In",
                                "values": ["true"],
                            },
                        ]
                    }
                ]
            }
        }
    },
    "tolerations": SEED004_TOLERATIONS,
}
EXTRA_LABELS = {
    "gpu.gpu-vendor.example/installed-memory": "81920",
    "feature.node.kubernetes.io/pci-10.present": "true",
}


@pytest.mark.parametrize(
    ("fragment", "labels"),
    [
        (SEED004_NODE_SELECTOR, SEED004_NODE_LABELS),
        (SEED004_AFFINITY_IN, SEED004_NODE_LABELS),
        (SEED004_AFFINITY_GT, {**SEED004_NODE_LABELS, **EXTRA_LABELS}),
    ],
    ids=["nodeSelector", "affinity-In", "affinity-Gt"],
)
def test_seed004_node_admits_each_server_placement(fragment, labels):
    placement = Placement.from_pod_spec(fragment)
    assert placement.to_pod_spec() == fragment
    assert placement.admits(labels, [SEED004_TAINT]) is True
    assert placement.why_not(labels, [SEED004_TAINT]) == []
    # Refused once the toleration is gone.
    bare = placement.without_tolerations(["seldon-gpu-srv"])
    assert bare.admits(labels, [SEED004_TAINT]) is False
    assert bare.why_not(labels, [SEED004_TAINT]) == [
        "taint seldon-gpu-srv=true:NoSchedule not tolerated"
    ]


def test_seed004_gt_placement_needs_the_extra_labels():
    placement = Placement.from_pod_spec(SEED004_AFFINITY_GT)
    assert placement.admits(SEED004_NODE_LABELS, [SEED004_TAINT]) is False
    assert placement.why_not(SEED004_NODE_LABELS, [SEED004_TAINT]) == [
        "required node affinity matches no term"
    ]
    one_gpu = {**SEED004_NODE_LABELS, **EXTRA_LABELS, "cloud.google.com/gke-accelerator-count": "1"}
    assert placement.admits(one_gpu, [SEED004_TAINT]) is False


def test_seed004_placements_are_produced_by_for_pool():
    selector = {"pool": "infer-srv", "cloud.google.com/gke-accelerator": "nvidia-a100-80gb"}
    p = Placement.for_pool(selector, [SEED004_TAINT])
    assert p.to_pod_spec() == SEED004_NODE_SELECTOR
    assert p.with_style("nodeAffinity").to_pod_spec() == SEED004_AFFINITY_IN
    assert Placement.for_pool(selector, [SEED004_TAINT], "nodeAffinity") == p.with_style(
        "nodeAffinity"
    )
    gt = Placement.for_pool({}, [SEED004_TAINT]).with_expressions(
        [
            req("cloud.google.com/gke-accelerator-count", "Gt", "1"),
            req("gpu.gpu-vendor.example/installed-memory", "Gt", "75000"),
            req("feature.node.kubernetes.io/pci-10.present", "In", "true"),
        ]
    )
    assert gt.to_pod_spec() == SEED004_AFFINITY_GT
    assert p.uses == {"nodeSelector", "tolerations"}
    assert gt.uses == {"affinity", "tolerations"}


def test_seed001_gpu_node_selector():
    p = Placement.for_pool({"k8s.amazonaws.com/accelerator": "nvidia-tesla-t4"}, [])
    assert p.to_pod_spec() == {"nodeSelector": {"k8s.amazonaws.com/accelerator": "nvidia-tesla-t4"}}


def test_for_pool_tolerates_filtering_taints_only():
    taints = [Taint(GPU_RESOURCE, "present", NS), Taint("spot", "", NE), Taint("soft", "x", PNS)]
    p = Placement.for_pool({"pool": "a"}, taints)
    assert p.to_pod_spec()["tolerations"] == [
        {"key": GPU_RESOURCE, "operator": "Equal", "value": "present", "effect": NS},
        {"key": "spot", "operator": "Exists", "effect": NE},
    ]


def test_placement_input_errors_name_the_path():
    text = error_text(Placement, {"pool": 2})
    assert text.startswith("nodeSelector.pool: 2 is not a string")
    assert "scheduling style 'affinity' is not known" in error_text(
        Placement({"pool": "a"}).with_style, "affinity"
    )
    assert "allowed: one or more pools" in error_text(Placement.any_of, [])
    assert "selects no labels" in error_text(
        Placement.any_of, [Placement({"pool": "a"}), Placement()]
    )


def test_node_selector_order_does_not_matter_for_equality():
    a = Placement({"x": "1", "y": "2"})
    b = Placement({"y": "2", "x": "1"})
    assert a == b and hash(a) == hash(b)
    assert list(b.to_pod_spec()["nodeSelector"]) == ["y", "x"]  # written order kept


def test_any_of_prefers_in_order_and_unions_tolerations():
    spot = Placement.for_pool({"pool": "spot"}, [Taint("spot", "true", NS)])
    demand = Placement.for_pool({"pool": "demand"}, [Taint(GPU_RESOURCE, "present", NS)])
    both = Placement.any_of([spot, demand])
    spec = both.to_pod_spec()
    aff = spec["affinity"]["nodeAffinity"]
    assert [p["weight"] for p in aff["preferredDuringSchedulingIgnoredDuringExecution"]] == [
        100,
        90,
    ]
    assert len(aff["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]) == 2
    assert [t["key"] for t in spec["tolerations"]] == ["spot", GPU_RESOURCE]
    assert Placement.any_of([spot]) is spot


def test_with_style_keeps_an_empty_term_empty():
    # An empty term matches nothing; ANDing the selector into it must not make it match.
    p = Placement({"pool": "a"}, node_affinity=NodeAffinity((NodeSelectorTerm(),)))
    assert p.admits({"pool": "a"}, []) is False
    assert p.with_style("nodeAffinity").admits({"pool": "a"}, []) is False
    assert p.with_expressions([req("b", "Exists")]).admits({"pool": "a", "b": ""}, []) is False
    terms = p.terms()
    assert terms is not None and all(t.is_empty for t in terms)


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------


def test_input_error_paths():
    e = InputError("'x' is bad", "good things")
    assert str(e) == "'x' is bad (allowed: good things)"
    assert str(e.at("args.pool")) == "args.pool: 'x' is bad (allowed: good things)"
    assert e.at("a").at("b").path == "b.a"
    assert InputError("p", path="[0]").at("pools").path == "pools[0]"
    assert e.at("") is e


# ---------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------

KEYS = ["pool", "gpu", "zone", "example.com/tier", "nvidia.com/gpu.product"]
VALUES = ["", "a", "b", "infer-srv", "1", "true"]
keys = st.sampled_from(KEYS)
values = st.sampled_from(VALUES)
label_sets = st.dictionaries(keys, values, max_size=4)
effects = st.sampled_from([NS, PNS, NE])
taints = st.builds(Taint, keys, st.sampled_from(["", "true", "present"]), effects)


@st.composite
def tolerations(draw):
    kind = draw(st.sampled_from(["equal", "exists", "wildcard"]))
    effect = draw(st.sampled_from(["", NS, PNS, NE]))
    seconds = draw(st.none() | st.integers(0, 3600)) if effect == NE else None
    if kind == "wildcard":
        return Toleration("", "Exists", "", effect, seconds)
    if kind == "exists":
        return Toleration(draw(keys), "Exists", "", effect, seconds)
    return Toleration(draw(keys), "Equal", draw(values), effect, seconds)


@st.composite
def requirements(draw):
    op = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]))
    key = draw(keys)
    if op in ("In", "NotIn"):
        vals = draw(st.lists(values, min_size=1, max_size=3))
    elif op in ("Gt", "Lt"):
        vals = [str(draw(st.integers(0, 3)))]
    else:
        vals = []
    return NodeSelectorRequirement(key, op, vals)


terms = st.builds(NodeSelectorTerm, st.lists(requirements(), max_size=3))
affinities = st.builds(
    NodeAffinity,
    st.none() | st.lists(terms, max_size=3),
    st.lists(st.builds(PreferredSchedulingTerm, st.integers(1, 100), terms), max_size=2),
)
placements = st.builds(
    Placement,
    label_sets,
    st.lists(tolerations(), max_size=3),
    st.none() | affinities,
)
node_labels = st.dictionaries(keys, st.sampled_from([*VALUES, "0", "2", "3"]), max_size=5)


@FAST
@given(
    st.dictionaries(keys, values, min_size=1, max_size=4), st.lists(taints, max_size=4), st.data()
)
def test_for_pool_admits_exactly_its_pool(labels, node_taints, data):
    for style in ("nodeSelector", "nodeAffinity"):
        p = Placement.for_pool(labels, node_taints, style)
        assert p.admits(labels, node_taints)
        missing = data.draw(st.sampled_from(sorted(labels)))
        without = {k: v for k, v in labels.items() if k != missing}
        assert not p.admits(without, node_taints)
        changed = {**labels, missing: labels[missing] + "x"}
        assert not p.admits(changed, node_taints)


@FAST
@given(taints)
def test_wildcard_toleration_tolerates_every_taint(taint):
    assert Toleration(operator="Exists").tolerates(taint)
    assert Toleration("", "Exists", "", taint.effect).tolerates(taint)


@FAST
@given(taints, tolerations())
def test_tolerates_is_upstream_rule(taint, tol):
    expected = (
        (not tol.effect or tol.effect == taint.effect)
        and (not tol.key or tol.key == taint.key)
        and (tol.operator == "Exists" or tol.value == taint.value)
    )
    assert tol.tolerates(taint) is expected


@FAST
@given(placements, node_labels, st.lists(taints, max_size=3), taints)
def test_prefer_no_schedule_never_changes_admits(p, labels, node_taints, extra):
    soft = Taint(extra.key, extra.value, PNS)
    assert p.admits(labels, [*node_taints, soft]) == p.admits(labels, node_taints)


@FAST
@given(placements)
def test_pod_spec_round_trip_both_styles(p):
    assert Placement.from_pod_spec(p.to_pod_spec()) == p
    q = p.with_style("nodeAffinity")
    assert Placement.from_pod_spec(q.to_pod_spec()) == q


@FAST
@given(placements, node_labels, st.lists(taints, max_size=3))
def test_node_affinity_style_admits_the_same_nodes(p, labels, node_taints):
    q = p.with_style("nodeAffinity")
    assert not q.node_selector
    assert q.admits(labels, node_taints) == p.admits(labels, node_taints)


@FAST
@given(placements, placements, node_labels, st.lists(taints, max_size=3))
def test_any_of_admits_iff_one_admits(a, b, labels, node_taints):
    """For placements that select labels (`terms()` is not None) and a node whose every
    NoSchedule / NoExecute taint both `a` and `b` tolerate, any_of([a, b]) admits the node iff
    `a` or `b` does. Whatever the taints, a node `a` or `b` admits, any_of admits."""
    if a.terms() is None or b.terms() is None:
        return
    both = Placement.any_of([a, b])
    either = a.admits(labels, node_taints) or b.admits(labels, node_taints)
    if either:
        assert both.admits(labels, node_taints)
    tolerated_by_both = not untolerated(node_taints, a.tolerations or ()) and not untolerated(
        node_taints, b.tolerations or ()
    )
    if tolerated_by_both:
        assert both.admits(labels, node_taints) == either


@FAST
@given(st.integers(INT64_MIN, INT64_MAX), st.integers(0, INT64_MAX), st.integers(0, 3))
def test_gt_lt_agree_with_int_comparison(n, threshold, zeros):
    label = str(n) if n < 0 else "0" * zeros + str(n)
    labels = {"k": label}
    assert req("k", "Gt", str(threshold)).matches(labels) is (n > threshold)
    assert req("k", "Lt", str(threshold)).matches(labels) is (n < threshold)


@FAST
@given(st.integers(INT64_MAX + 1, 2**70) | st.integers(-(2**70), INT64_MIN - 1))
def test_gt_lt_never_match_out_of_int64_range(n):
    assert not req("k", "Gt", "0").matches({"k": str(n)})
    assert not req("k", "Lt", "0").matches({"k": str(n)})


@FAST
@given(st.integers(0, 10**6), st.sampled_from(["", "m", "k", "Mi", "Gi", "e3", "n"]))
def test_quantity_integer_with_suffix(n, suffix):
    factor = {
        "": Decimal(1),
        "m": Decimal("0.001"),
        "k": Decimal(1000),
        "Mi": Decimal(2**20),
        "Gi": Decimal(2**30),
        "e3": Decimal(1000),
        "n": Decimal("1e-9"),
    }[suffix]
    assert parse_quantity(f"{n}{suffix}") == n * factor


@pytest.mark.parametrize(
    "fragment",
    [
        {"affinity": "x"},
        {"affinity": [], "nodeSelector": ["a"]},
        {"tolerations": "x"},
        {"tolerations": ["x", None]},
        {"affinity": {"nodeAffinity": "x"}},
        {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": "x"}}},
        {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": "x"}}},
        "not a mapping",
    ],
)
def test_a_malformed_pod_spec_fragment_reads_as_no_placement(fragment):
    """A graph may hold anything where a pod spec goes (a chart's values, a hand-written
    resource): such a field reads as absent, never as an internal error (found by the deep fuzz
    run: a device plugin Release whose `values.affinity` was a string)."""
    placement = Placement.from_pod_spec(fragment)
    assert placement.node_selector == {} and placement.tolerations == ()
    affinity = placement.node_affinity
    assert affinity is None or (affinity.required is None and affinity.preferred == ())


def test_malformed_terms_inside_a_node_affinity_read_as_absent():
    na = {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                "x",
                {"matchExpressions": [None, {"key": "a", "operator": "Exists"}]},
            ]
        },
        "preferredDuringSchedulingIgnoredDuringExecution": [7, {"weight": 1, "preference": "x"}],
    }
    affinity = Placement.from_pod_spec({"affinity": {"nodeAffinity": na}}).node_affinity
    assert affinity is not None
    assert [t.to_dict() for t in affinity.required or ()] == [
        {"matchExpressions": [{"key": "a", "operator": "Exists"}]}
    ]
    assert [p.weight for p in affinity.preferred or ()] == [1]
