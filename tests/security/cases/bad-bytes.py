# class: supervisor
# expect: json-valid; status=ok; stdout~BAD-UTF8; stdout~AFTER-NUL; stdout~\ufffd; stdout~TAIL-MARK; stderr~AFTER-NUL; stderr~\ufffd
# why: invalid UTF-8, NUL bytes, terminal escapes (CSI, OSC, 8-bit C1), surrogates and a cut multibyte sequence in the output: the JSON result stays valid and nothing after a NUL is lost
import os

payload = (b"A\xff\xfe\xc3\x28 BAD-UTF8\n"
           b"before\x00AFTER-NUL\n"
           b"\x1b[2J\x1b[H\x1b]0;pwned title\x07\x1b[31m ESC sequences \x1b[0m\n"
           b"\x9b6n 8-bit CSI\n"
           b"\xed\xa0\x80 encoded surrogate\n"
           b"\xf4\x90\x80\x80 beyond U+10FFFF\n"
           b"\xc0\xaf overlong slash\n"
           + "\u2028 line separator \u0085 NEL \U0001F600 emoji\n".encode()
           + b"\x7f\x08\x08\x08 backspaces \r carriage return\n"
           + b"\"quote\" \\backslash\\ {\"status\": \"ok\"}\n"
           + b"TAIL-MARK \xe2\x82")  # ends in the middle of a 3-byte sequence
os.write(1, payload)
os.write(2, payload)
