import sys

print("loading")
sys.exit("fatal: input.csv is empty")
