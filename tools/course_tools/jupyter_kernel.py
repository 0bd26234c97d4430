"""Kernels for headless runs: whatever kernel a notebook names, run it with this Python environment."""

from __future__ import annotations

from typing import Any


def this_environment_kernel_manager(manager_class: Any = None, **traits: Any) -> Any:
    """An ``AsyncKernelManager`` (or ``manager_class``) whose ``python3`` kernel is this interpreter, as nbval's
    ``--nbval-current-env`` does, so a notebook's kernelspec never sends it to another environment.

    Asynchronous, as nbclient expects: with a blocking manager its per-cell timeouts never fire, because waiting for
    output blocks the event loop that would raise them.
    """
    # Jupyter's packages come with the runner and lab extras, not with the lessons' dependencies: imported on use
    import ipykernel.kernelspec
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager

    class ThisEnvironment(KernelSpecManager):
        def get_kernel_spec(self, kernel_name: str):
            return self.kernel_spec_class(
                resource_dir=ipykernel.kernelspec.RESOURCES, **ipykernel.kernelspec.get_kernel_dict()
            )

    return (manager_class or AsyncKernelManager)(kernel_name="python3", kernel_spec_manager=ThisEnvironment(), **traits)
