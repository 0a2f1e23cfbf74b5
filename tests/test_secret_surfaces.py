"""Where a credential could still be shown or sent once the scan has found it (issue 39): a
durable note holding one is never a judge's neighbour, `doctor` names such notes masked,
`status` says that dropped items keep the candidate whole, and the review masks a title too."""

from __future__ import annotations

import json
from typing import Any

from test_judge import CURATED, NEIGHBOUR, judged  # noqa: F401  (`judged` is the fixture)

TOKEN = "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"
HOLDING = "insights/deploy-keys.md"
KEYED = f"""---
type: insight
title: Deploy keys
source_url: https://example.dev/deploy
---
The deploy bot reads {TOKEN} from its environment.
"""


def test_the_judge_is_never_sent_a_neighbour_holding_a_credential(judged: Any) -> None:  # noqa: F811
    (judged.vault / HOLDING).write_text(KEYED, encoding="utf-8")
    judged.candidates(2)
    judged.links["insight-01.md"] = [HOLDING, NEIGHBOUR]
    judged.links["insight-02.md"] = [HOLDING]
    result, _ = judged.run()
    assert result.exit_code == 0, result.output
    sent = json.dumps(judged.model.requests)
    assert "Sweeping the inbox weekly keeps it small." in sent  # the clean neighbour was shown
    assert TOKEN not in sent and "The deploy bot reads" not in sent
    assert CURATED.splitlines()[2] in sent
