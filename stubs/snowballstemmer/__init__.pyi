# The part of snowballstemmer (which ships no types) that memory_curator uses: `core/words.py`.

class _Stemmer:
    def stemWord(self, word: str) -> str: ...  # noqa: N802
    def stemWords(self, words: list[str]) -> list[str]: ...  # noqa: N802

def stemmer(lang: str) -> _Stemmer: ...
def algorithms() -> list[str]: ...
