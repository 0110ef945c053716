"""Lesson 10's widget: ``PlanStepper(events)`` steps through the plan the model kept, one
accepted ``todo`` update at a time (a thin shell around ``ground_render``)."""

from __future__ import annotations

from .ground_render import plan_html, plan_text
from .ground_state import plan_updates
from .widgets import _Stepper


class PlanStepper(_Stepper):
    """Step through a run's plan, update by update."""

    css_class = "labkit-plan-stepper"

    def __init__(self, events: list):
        self.plans = plan_updates(events)
        if not self.plans:
            raise ValueError("this run has no accepted todo update to step through")
        super().__init__(1, len(self.plans), label="update")

    def step_html(self, value: int) -> str:
        return plan_html(self.plans[value - 1], f"update {value} of {len(self.plans)}")

    def static_html(self) -> str:
        return plan_html(self.plans[-1], f"update {len(self.plans)} of {len(self.plans)}")

    def summary(self) -> str:
        return f"PlanStepper: {len(self.plans)} updates; the last:\n{plan_text(self.plans[-1])}"
