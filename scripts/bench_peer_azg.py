#!/usr/bin/python3
"""Self-play speed of the peer AlphaZero_Gomoku (github.com/junxiaosong/AlphaZero_Gomoku),
run with its own code: its Board/Game, MCTSPlayer (c_puct 5, 400 playouts) and PyTorch
PolicyValueNet with untrained weights, 8x8, five in a row, one thread, as its train.py
collects self-play data (temp 1.0, tree reuse). Prints simulations/s = moves x playouts /
wall seconds, and with --json one JSON object. A benchmark peer only (issue 15): nothing
of it is part of gridzero.

usage: bench_peer_azg.py PEER_DIR [--games N] [--seconds S] [--json]
PEER_DIR holds the peer's game.py, mcts_alphaZero.py and policy_value_net_pytorch.py
(from a checkout of the repository). Needs python3-torch (Debian) and numpy.
"""
import argparse, json, sys, time

ap = argparse.ArgumentParser()
ap.add_argument("peer")
ap.add_argument("--games", type=int, default=1)
ap.add_argument("--seconds", type=float, default=0, help="stop after the game that passes this")
ap.add_argument("--playouts", type=int, default=400)
ap.add_argument("--json", action="store_true")
a = ap.parse_args()
sys.path.insert(0, a.peer)
import numpy as np
import torch
torch.set_num_threads(1)
np.random.seed(1)
torch.manual_seed(1)
from game import Board, Game
from mcts_alphaZero import MCTSPlayer
from policy_value_net_pytorch import PolicyValueNet

board = Board(width=8, height=8, n_in_row=5)
game = Game(board)
net = PolicyValueNet(8, 8)
player = MCTSPlayer(net.policy_value_fn, c_puct=5, n_playout=a.playouts, is_selfplay=1)
moves, t0, games = 0, time.perf_counter(), 0
while games < a.games or (a.seconds > 0 and time.perf_counter() - t0 < a.seconds):
    winner, data = game.start_self_play(player, temp=1.0)
    moves += len(list(data))
    games += 1
dt = time.perf_counter() - t0
out = {"peer": "AlphaZero_Gomoku", "games": games, "moves": moves, "playouts": a.playouts,
       "seconds": round(dt, 3), "simulations_per_s": round(moves * a.playouts / dt, 1),
       "torch": torch.__version__, "threads": torch.get_num_threads()}
print(json.dumps(out) if a.json else
      f"AlphaZero_Gomoku self-play: {games} games, {moves} moves, {dt:.1f} s: "
      f"{out['simulations_per_s']:.0f} simulations/s (torch {torch.__version__}, 1 thread)")
