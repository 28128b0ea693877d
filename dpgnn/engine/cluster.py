"""The Dask cluster: a local one sized to the machine, the workers' environment, and a SLURM one."""

from __future__ import annotations

import os


def cluster_size(
    workers: int | None,
    threads_per_worker: int,
    workers_per_gpu: int,
    device: str,
    cores: int | None = None,
    gpus: int | None = None,
) -> int:
    """Number of local workers: given, or ``G`` per GPU on a GPU machine, else one per ``T`` cores; never more
    threads in all than cores (``workers × threads ≤ cores``, else ``ValueError``)."""
    if threads_per_worker < 1 or workers_per_gpu < 1 or (workers is not None and workers < 1):
        raise ValueError("workers, threads per worker and workers per GPU must be >= 1")
    cores = cores or os.cpu_count() or 1
    if gpus is None:
        import torch

        gpus = torch.cuda.device_count() if device != "cpu" else 0
    if workers is None:
        workers = gpus * workers_per_gpu if gpus else max(1, cores // threads_per_worker)
        workers = max(1, min(workers, cores // threads_per_worker))
    if workers * threads_per_worker > cores:
        raise ValueError(
            f"{workers} workers x {threads_per_worker} threads oversubscribe this machine's {cores} "
            f"cores; lower --workers or --threads-per-worker"
        )
    return workers


def local_cluster(workers: int, threads_per_worker: int = 1):
    """A ``LocalCluster`` of ``workers`` processes with ``threads_per_worker`` threads each (BLAS/OpenMP pools of
    the same size, so a worker never oversubscribes its share of the cores)."""
    import logging

    from dask.distributed import LocalCluster

    # the scheduler runs in this process: its INFO chatter (and the closed-comm traceback it logs at INFO when the
    # cluster shuts down) is not ours to show (the engine prints the dashboard link); warnings and errors still are.
    # Set after the import, which applies dask's own logging configuration.
    logging.getLogger("distributed").setLevel(logging.WARNING)
    return LocalCluster(
        n_workers=workers,
        threads_per_worker=threads_per_worker,
        processes=True,
        silence_logs=logging.ERROR,
        env=worker_env(threads_per_worker),
    )


def worker_env(threads: int) -> dict[str, str]:
    """Environment of a worker process: thread pools of ``threads`` and MKL's conditional numerical
    reproducibility (``MKL_CBWR=AUTO,STRICT``, unless set): without it MKL's results may depend on memory
    alignment, so the same cell could differ in the last bits between two processes (and a training run amplifies
    that). Set it for a sequential run too when comparing the two bit for bit."""
    t = str(int(threads))
    return {
        "OMP_NUM_THREADS": t,
        "MKL_NUM_THREADS": t,
        "OPENBLAS_NUM_THREADS": t,
        "MKL_CBWR": os.environ.get("MKL_CBWR", "AUTO,STRICT"),
    }


def slurm_cluster(**kwargs):
    """A ``dask_jobqueue.SLURMCluster`` whose jobs start dpgnn workers (one process, one thread per core asked,
    the same environment variables as :func:`local_cluster`). ``kwargs`` go to ``SLURMCluster`` (queue, account,
    cores, memory, walltime, job_extra_directives, ...); scale it with ``cluster.scale(jobs=N)`` and pass
    ``cluster.scheduler_address`` as ``--scheduler``."""
    from dask_jobqueue import SLURMCluster

    cores = int(kwargs.pop("cores", 4))
    opts = {
        "cores": cores,
        "processes": 1,
        "memory": kwargs.pop("memory", "16GB"),
        "walltime": kwargs.pop("walltime", "04:00:00"),
        "job_script_prologue": ["export " + " ".join(f"{k}={v}" for k, v in worker_env(cores).items())]
        + list(kwargs.pop("job_script_prologue", [])),
    }
    opts.update(kwargs)
    return SLURMCluster(**opts)
