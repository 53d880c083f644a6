#!/usr/bin/python3
"""Validates JSON documents against omn-audit's schemas (docs/schema/).
  check_schema.py SCHEMA_DIR SCHEMA_FILE DOC.json [DOC.json ...]"""
import json
import os
import sys

import jsonschema

schema_dir, schema_file, docs = sys.argv[1], sys.argv[2], sys.argv[3:]
store = {}
for f in os.listdir(schema_dir):
    if f.endswith(".json"):
        s = json.load(open(os.path.join(schema_dir, f)))
        store[s["$id"]] = s
schema = store[schema_file]
resolver = jsonschema.RefResolver(base_uri="", referrer=schema, store=store)
validator = jsonschema.Draft202012Validator(schema, resolver=resolver)
bad = 0
for d in docs:
    errors = sorted(validator.iter_errors(json.load(open(d))), key=lambda e: list(e.path))
    for e in errors[:10]:
        print("%s: /%s: %s" % (d, "/".join(map(str, e.path)), e.message))
    bad += bool(errors)
print("%d passed, %d failed" % (len(docs) - bad, bad))
sys.exit(1 if bad else 0)
