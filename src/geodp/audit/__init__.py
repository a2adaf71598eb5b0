"""Audits a user can run to check geodp's guarantees (docs/audit.md).

* :func:`audit_epsilon`: an empirical lower bound on the ε of a private Fréchet-mean release,
  certified with a stated confidence on a worst-case pair of neighbouring inputs, and the exact ε
  where it can be computed; :func:`plot_loss` draws its privacy-loss distribution.
* :func:`audit_sensitivity`: an adversarial search for neighbouring datasets whose statistics lie
  farther apart than the sensitivity bound the noise is calibrated with.

A bound that exceeds the claim shows a violation; one that does not is evidence, not proof.
"""

from geodp.audit.epsilon import EpsilonAudit, EventBound, audit_epsilon
from geodp.audit.plot import plot_loss
from geodp.audit.sensitivity import SensitivityAudit, audit_sensitivity

__all__ = ["EpsilonAudit", "EventBound", "SensitivityAudit", "audit_epsilon", "audit_sensitivity", "plot_loss"]
