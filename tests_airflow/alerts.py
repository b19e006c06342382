"""A failure Notifier for the tests, named by ``KAFKA_AUDIT_DAG_ON_FAILURE_CALLBACK``.

``tests_airflow.alerts.file_notifier`` appends one JSON line per failed task to the file named
by ``KSA_TEST_ALERTS`` (a test's temporary file), the way an ``SmtpNotifier`` or
``SlackNotifier`` instance would send a mail or a message: the DAG takes any callable of the
context, and a Notifier instance is one.
"""

from __future__ import annotations

import json
import os

from airflow.sdk import BaseNotifier, Context


class FileNotifier(BaseNotifier):
    """Appends ``{"dag_id", "task_id", "ds", "exception"}`` to ``$KSA_TEST_ALERTS``."""

    def notify(self, context: Context) -> None:
        """Write the failure's line (nothing when ``KSA_TEST_ALERTS`` is unset)."""
        path = os.environ.get("KSA_TEST_ALERTS")
        if not path:
            return
        ti = context["ti"]
        record = {
            "dag_id": ti.dag_id,
            "task_id": ti.task_id,
            "ds": context["ds"],
            "exception": str(context.get("exception")),
        }
        with open(path, "a", encoding="utf-8") as alerts:
            alerts.write(json.dumps(record) + "\n")


file_notifier = FileNotifier()
not_callable = 42
