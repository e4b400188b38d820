"""Building blocks of tools/make_corpus.py: seeded text, one rollout played forward, the record around it."""
