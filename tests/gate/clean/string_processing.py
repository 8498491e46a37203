import textwrap
import unicodedata

text = "Café naïve façade — déjà vu 🐍 " * 3
print(textwrap.fill(text, width=30))
plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
print(plain.strip())
table = str.maketrans({"a": "4", "e": "3"})
print("release the beast".translate(table), "ß".upper(), "İ".lower().encode())
print(textwrap.dedent("""
    indented
      more
""").strip())
