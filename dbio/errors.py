"""Domain errors. Only the CLI maps them to exit codes and prints them."""

from __future__ import annotations


class DbioError(Exception):
    """An error the user can act on: a message and, when there is one, the fix."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}; {self.hint}" if self.hint else self.message


class NoDatabase(DbioError):
    """A look at dbio's own instance found no database of that name (a look creates none)."""


class UsageError(DbioError):
    """Bad input (configuration, arguments, preconditions): nothing was created or changed."""

    exit_code = 2


SHOWN_CHARACTERS = 1000  # of a value in an error: a long path is shown whole, 5000 digits by their start


class ConfigError(UsageError):
    """One bad configuration value: names the key, the value and the fix."""

    def __init__(self, key: str, value: object, problem: str, fix: str):
        shown = value if isinstance(value, str) else repr(value)
        if len(shown) > SHOWN_CHARACTERS:  # a value thousands of characters long is shown by its start
            shown = f"{shown[:80]}... ({len(shown)} characters)"
        super().__init__(f"{key} = {shown}: {problem}", fix)
        self.key = key
        self.value = value


class ConfigErrors(UsageError):
    """Several configuration errors found in one validation pass (one line each)."""

    def __init__(self, errors: list[ConfigError]):
        super().__init__("\n".join(str(e) for e in errors))
        self.errors = errors

    def __str__(self) -> str:
        return self.message


class Interrupted(DbioError):
    exit_code = 130


class Terminated(Interrupted):
    """Stopped by SIGTERM: the status a shell gives a process that SIGTERM ended (128 + 15)."""

    exit_code = 143
