"""The fuzz engine: requests the codec's declarations generate (well-formed with unusual values,
and malformed), random client sessions compared with the reference model, the oracle that judges
both, and the corpus of what they found. The cases that run it are in suites/fuzz/.
"""
