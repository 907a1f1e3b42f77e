"""What goes into training, and in what order (`whileai curriculum`, `whileai decontaminate`).

- curriculum: graded tasks ordered easy to hard, the solved retired
- decontaminate: training rows that copy an evaluation set, by task or by text
- duplicates: the same trajectory twice inside an ask, and two asks that are one ask
- stages: stage lineage, which stage of the pipeline each row fed (and an eval task
  used in training)
"""
