"""The soak engine: a fleet of simulated KIP-714 clients against a broker for minutes to hours.

Layers, left to right (each imports only what is to its left):

    payload, client (pure: the KIP's client behaviour as a sans-IO state machine)
    -> fleet (asyncio: many clients per event loop, worker processes)
    -> schedule, sink, broker_stats (churn, faults and what the target shows)
    -> ledger, delivery (pure: events in, per-interval samples and SLO facts out)
    -> objectives, judge, samples, report (the SLOs, rules of the book, declared; verdicts as
       `soak.*` results, Parquet, the soak page)
    -> run (the coordinator; its command line, `kconform soak`, is kconform.cli.soak)

`pipelines/soak.py` turns the samples into the report's tables with Spark.
"""
