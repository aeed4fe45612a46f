from kernlint.cli import entry

entry()
