import string
print(string.letters[:3])
