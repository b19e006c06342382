"""The cluster-day log simulator behind ``kafka-audit generate``.

``base`` is the contract (World, Node, Client, LogLine, Truth, Area); ``world`` builds the
cluster from the options; the areas (``auth``, ``requests``, ``authorizer``, ``tokens``,
``forwarding``, ``connect``) produce lines and truth; ``layouts`` renders, ``writer`` writes,
``truth`` records the ground truth; ``generate`` drives them. See docs/generator.md.
"""
