"""Count the most common words in a text."""
import re
from collections import Counter

TEXT = """It was the best of times, it was the worst of times, it was the age of
wisdom, it was the age of foolishness, it was the epoch of belief."""

words = re.findall(r"[a-z']+", TEXT.lower())
counts = Counter(words)
for word, n in counts.most_common(5):
    print(f"{word:>10} {n}")
print("distinct:", len(counts))
