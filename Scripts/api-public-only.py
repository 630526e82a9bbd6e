"""Drops the declarations that are not API from a swift-api-digester dump (docs/API.md).

swift-api-digester's -dump-sdk also writes `package` declarations, marked "isInternal"; they are for the package's
own targets and may change at any time, so check-api.sh compares dumps without them.

    python3 Scripts/api-public-only.py IN.json OUT.json
"""
import json
import sys


def prune(node):
    children = node.get("children")
    if children is not None:
        node["children"] = [prune(child) for child in children if not child.get("isInternal", False)]
    return node


with open(sys.argv[1], encoding="utf-8") as source:
    dump = json.load(source)
with open(sys.argv[2], "w", encoding="utf-8") as target:
    # The dump is {"ABIRoot": {"children": [...]}, ...}: prune each root.
    json.dump({key: prune(value) if isinstance(value, dict) else value for key, value in dump.items()}, target)
