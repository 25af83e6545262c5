#!/usr/bin/env python3
"""Writes the malformed inputs too big to commit into DIR:
  kd_field_10mb.csv   kernel_details whose Input Shapes cell is 10 MB
  kd_slots_10000.csv  kernel_details whose Input Shapes cell has 10,000 slots
  rb_slots_10000.csv  a database table (replayed by microbench) with a
                      10,000-slot Input Shapes cell
   usage: gen_big.py DIR"""
import os, sys

d = sys.argv[1]
os.makedirs(d, exist_ok=True)
KD = ("Type,Accelerator Core,Input Shapes,Input Data Types,Input Formats,"
      "Output Shapes,Output Data Types,Output Formats,Duration(us)\r\n")
with open(os.path.join(d, "kd_field_10mb.csv"), "w", newline="") as f:
    f.write(KD)
    f.write('Add,AI_VECTOR_CORE,"' + "7," * (5 * 1024 * 1024) + '7",DT_BF16,ND,"4,8",DT_BF16,ND,5.0\r\n')
slots = ";".join(["4,8"] * 10000)
with open(os.path.join(d, "kd_slots_10000.csv"), "w", newline="") as f:
    f.write(KD)
    f.write('Add,AI_VECTOR_CORE,"%s",%s,%s,"4,8",DT_BF16,ND,5.0\r\n'
            % (slots, ";".join(["DT_BF16"] * 10000), ";".join(["ND"] * 10000)))
with open(os.path.join(d, "rb_slots_10000.csv"), "w", newline="") as f:
    f.write("OP State,Accelerator Core,Input Shapes,Input Data Types,Input Formats,"
            "Output Shapes,Output Data Types,Output Formats,Average Duration(us)\n")
    f.write('dynamic,AI_VECTOR_CORE,"%s",%s,%s,"""4,8""",DT_BF16,ND,\n'
            % (";".join(['""4,8""'] * 10000), ";".join(["DT_BF16"] * 10000), ";".join(["ND"] * 10000)))
