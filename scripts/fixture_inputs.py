"""The files a consumer check reads: every fixture and, unless told not to,
the real corpus beside the checkout (a check that should read it fails when
it is missing, never skips it). Shared by the check-*.py scripts."""
import glob
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "..", "shared", "corpus")


def inputs(consumer, corpus_too=True):
    files = []
    for ext in ("jsonl", "json", "jsonl.zst"):
        files += glob.glob(os.path.join(ROOT, "fixtures", "**", "*." + ext), recursive=True)
    if corpus_too:
        if not os.path.isdir(CORPUS):
            sys.exit(f"{CORPUS} is missing: {consumer} must read the corpus too")
        for ext in ("jsonl", "json"):
            files += glob.glob(os.path.join(CORPUS, "**", "*." + ext), recursive=True)
    # A fixture folder's own files (offloaded tool results) are read through
    # their session, not as inputs.
    files = [f for f in files if "tool-results" not in f.split(os.sep)]
    return sorted(set(files))
