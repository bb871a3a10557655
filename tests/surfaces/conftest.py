"""Surface tests (input validation, secrets, fuzzing) reuse the capture tests' isolated workspace fixture."""

from tests.capture.conftest import env  # noqa: F401 - the fixture, shared
