"""Kubernetes' rules for names, label keys and label values (`k8s.io/apimachinery/pkg/util/
validation`): what the API server refuses, said before anything is sent."""

import re
from collections.abc import Mapping

from ..errors import InputError, show

_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)
_DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")

LABEL_KEY_RULE = (
    "an optional DNS subdomain prefix and '/', then a name of at most 63 characters: "
    "alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric "
    "(e.g. 'pool' or 'cloud.google.com/gke-accelerator')"
)
LABEL_VALUE_RULE = (
    "empty, or at most 63 characters: alphanumerics, '-', '_' or '.', "
    "starting and ending with an alphanumeric"
)
DNS1123_LABEL_RULE = (
    "at most 63 characters: lowercase letters, digits and '-', starting and ending with a "
    "letter or digit (DNS-1123 label)"
)
DNS1123_SUBDOMAIN_RULE = (
    "at most 253 characters: dot-separated DNS-1123 labels (lowercase letters, digits, '-')"
)
DNS1035_LABEL_RULE = (
    "at most 63 characters: lowercase letters, digits and '-', starting with a letter and "
    "ending with a letter or digit (DNS-1035 label)"
)


def label_key_problem(key: object) -> str | None:
    """Why `key` is not a valid label key (or taint / toleration key), or None when it is valid.

    `IsQualifiedName` from k8s.io/apimachinery: an optional DNS-1123 subdomain prefix (at most
    253 characters) and '/', then a name of 1-63 characters `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`.
    """
    if not isinstance(key, str):
        return f"{show(key)} is not a string"
    if not key:
        return "the key is empty"
    parts = key.split("/")
    if len(parts) > 2:
        return f"{show(key)} has more than one '/'"
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            return f"{show(key)} has an empty prefix before '/'"
        if len(prefix) > 253:
            return f"the prefix of {show(key)} is {len(prefix)} characters long (at most 253)"
        if not _DNS1123_SUBDOMAIN.fullmatch(prefix):
            return f"the prefix {show(prefix)} of {show(key)} is not a lowercase DNS subdomain"
    if not name:
        return f"{show(key)} has an empty name after '/'"
    if len(name) > 63:
        return f"the name part of {show(key)} is {len(name)} characters long (at most 63)"
    if not _QUALIFIED_NAME.fullmatch(name):
        return f"{show(key)} is not a valid label key"
    return None


def label_value_problem(value: object) -> str | None:
    """Why `value` is not a valid label value (or taint value), or None when it is valid.

    `IsValidLabelValue` from k8s.io/apimachinery: empty, or 1-63 characters
    `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`.
    """
    if not isinstance(value, str):
        return f"{show(value)} is not a string (quote numbers and booleans in YAML)"
    if value == "":
        return None
    if len(value) > 63:
        return f"{show(value)} is {len(value)} characters long (at most 63)"
    if not _QUALIFIED_NAME.fullmatch(value):
        return f"{show(value)} is not a valid label value"
    return None


def validate_label_key(key: object) -> str:
    """`key` when it is a valid label key; InputError saying why not otherwise."""
    problem = label_key_problem(key)
    if problem or not isinstance(key, str):
        raise InputError(problem or f"{show(key)} is not a string", LABEL_KEY_RULE)
    return key


def validate_label_value(value: object) -> str:
    """`value` when it is a valid label value; InputError saying why not otherwise."""
    problem = label_value_problem(value)
    if problem or not isinstance(value, str):
        raise InputError(problem or f"{show(value)} is not a string", LABEL_VALUE_RULE)
    return value


def validate_labels(labels: Mapping[str, str]) -> dict[str, str]:
    """Every key and value valid; errors are located at the offending key."""
    out: dict[str, str] = {}
    for k, v in labels.items():
        try:
            validate_label_key(k)
        except InputError as e:
            raise e.at(f"{k}") from None
        try:
            validate_label_value(v)
        except InputError as e:
            raise e.at(f"{k}") from None
        out[k] = v
    return out


def _name_problem(name: str, kind: str, dots: bool, letter_first: bool, max_length: int = 0) -> str:
    """Everything wrong with a name that failed a DNS pattern, in words, in one sentence: one
    fault reads as before; several are all named, so that one fix is enough."""
    faults: list[tuple[str, str]] = []  # (what the name does, why that is wrong)
    if max_length and len(name) > max_length:
        faults.append((f"is {len(name)} characters long", f"at most {max_length}"))
    if any(c.isupper() for c in name):
        faults.append(("has uppercase letters", f"a {kind} is lowercase"))
    if not dots and "." in name:
        faults.append(("contains '.'", f"a {kind} has no dots"))
    bad = sorted({c for c in name if not (c.isascii() and (c.isalnum() or c in "-."))})
    if bad:
        faults.append((f"contains {', '.join(map(repr, bad))}", f"not allowed in a {kind}"))
    if letter_first and name and not name[0].isalpha():
        faults.append(("does not start with a letter", f"as a {kind} must"))
    elif name and not (name[0].isalnum() and name[-1].isalnum()):
        faults.append(("does not start and end with a letter or digit", f"as a {kind} must"))
    if not faults:  # e.g. 'a..b': an empty label between the dots
        faults.append(("does not start and end with a letter or digit", f"as a {kind} must"))
    if len(faults) == 1:
        what, why = faults[0]
        if why.startswith("at most"):
            return f"{show(name)} {what} ({why})"
        sep = "; " if why.startswith("a ") else ", "
        return f"{show(name)} {what}{sep}{why}"
    whats = [w for w, _ in faults]
    return (
        f"{show(name)} has {len(faults)} faults: it {', '.join(whats[:-1])} and {whats[-1]} "
        f"({'; '.join(why for _, why in faults)})"
    )


def validate_dns1123_label(name: object, max_length: int = 63) -> str:
    """`IsDNS1123Label`: lowercase alphanumerics and '-', alphanumeric at both ends, <= 63."""
    rule = DNS1123_LABEL_RULE.replace("at most 63", f"at most {max_length}")
    if not isinstance(name, str):
        raise InputError(f"{show(name)} is not a string", rule)
    if not name:
        raise InputError("the name is empty", rule)
    if len(name) > max_length or not _DNS1123_LABEL.fullmatch(name):
        raise InputError(_name_problem(name, "DNS-1123 label", False, False, max_length), rule)
    return name


def validate_dns1123_subdomain(name: object) -> str:
    """`IsDNS1123Subdomain`: dot-separated DNS-1123 labels, at most 253 characters."""
    if not isinstance(name, str):
        raise InputError(f"{show(name)} is not a string", DNS1123_SUBDOMAIN_RULE)
    if not name:
        raise InputError("the name is empty", DNS1123_SUBDOMAIN_RULE)
    if len(name) > 253:
        raise InputError(
            f"{show(name)} is {len(name)} characters long (at most 253)", DNS1123_SUBDOMAIN_RULE
        )
    if not _DNS1123_SUBDOMAIN.fullmatch(name):
        raise InputError(_name_problem(name, "DNS subdomain", True, False), DNS1123_SUBDOMAIN_RULE)
    return name


def validate_dns1035_label(name: object, max_length: int = 63) -> str:
    """`IsDNS1035Label`: like a DNS-1123 label but starting with a letter (Service names)."""
    rule = DNS1035_LABEL_RULE.replace("at most 63", f"at most {max_length}")
    if not isinstance(name, str):
        raise InputError(f"{show(name)} is not a string", rule)
    if not name:
        raise InputError("the name is empty", rule)
    if len(name) > max_length or not _DNS1035_LABEL.fullmatch(name):
        raise InputError(_name_problem(name, "DNS-1035 label", False, True, max_length), rule)
    return name
