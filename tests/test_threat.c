/* The threat-space solver (engine/games/threat.h): VCF and VCT answers on board
 * diagrams, each returned line checked move by move with the game's own rules (a
 * brute-force line check that shares no code with the solver's windows), the VCF
 * answers compared with a brute-force VCF search, VCT wins checked against every
 * possible defender reply, counter-four refutations of a naive VCT, bad input, budgets,
 * the defence set, the forbidden-point hook and the m,n,k game hooks.
 *
 * The diagrams: 'X' black (colour 1, the attacker unless the case says otherwise), 'O'
 * white, '.' empty; row 0 is the top row. The VCF and VCT positions were drawn at random
 * (clustered stones, no completed line, no completion point for either side) and kept
 * when the brute-force VCF search (bf_vcf below) gave a win of the listed shortest
 * length or none; the VCT ones when the solver's VCT answer survives every defender
 * reply (vct_*) or when only an unsound VCT that ignores counter-fours claims a win
 * (vct_refuted_*). The brute-force search re-checks the VCF answers on every run.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/config.h"
#include "engine/game.h"
#include "engine/games/threat.h"

typedef struct tcase {
    const char *name;
    int size;          /* size x size board */
    bool exact;        /* only exactly five wins */
    int attacker;      /* 1 = X */
    threat_kind kind;
    bool win;          /* the known answer */
    int min_moves;     /* VCF wins: the shortest win's attacker moves (the completing move
                        * included), from the brute-force search; 0 = not recorded */
    const char *rows[16];
} tcase;

static const tcase vcf_cases[] = {
    {"vcf4_10x10_1", 10, false, 1, THREAT_VCF, true, 4, {
        "..........",
        ".XO...X.X.",
        ".XO.OXOXX.",
        ".X.O.O....",
        ".O........",
        ".O..OXXOX.",
        ".X....O...",
        "...OXXOO..",
        ".XO...X.O.",
        "..........",
    }},
    {"vcf3_10x10_1", 10, false, 1, THREAT_VCF, true, 3, {
        "..........",
        ".XX..X.O..",
        ".O........",
        "...XO.....",
        "...XOOX.X.",
        "......OOO.",
        "..X....XX.",
        ".O...O....",
        ".O.X......",
        "..........",
    }},
    {"vcf3_10x10_2", 10, false, 1, THREAT_VCF, true, 3, {
        "..........",
        ".OXX.O....",
        "...X.X..O.",
        "..O..XX.O.",
        ".O...OX...",
        "...X...O..",
        ".XX...O...",
        ".O.OO.....",
        "....X.X...",
        "..........",
    }},
    {"novcf_4fours_10x10_1", 10, false, 1, THREAT_VCF, false, 0, {
        "..........",
        ".X..O.....",
        ".OX..XX...",
        "..........",
        "..X.....X.",
        "..O...X...",
        ".O.O......",
        ".O.O.X....",
        "...OOOXX..",
        "..........",
    }},
    {"vcf4_10x10_2", 10, false, 1, THREAT_VCF, true, 4, {
        "..........",
        "..XXO..O..",
        "..OX..OO..",
        ".X...O.X..",
        "..OO.XX...",
        "..X.X.O...",
        ".XXXOO....",
        ".O.X..X.O.",
        ".OO...XOX.",
        "..........",
    }},
    {"novcf_4fours_10x10_2", 10, false, 1, THREAT_VCF, false, 0, {
        "..........",
        ".O..O.XX..",
        ".O.XX..X..",
        "....OO.O..",
        "..O.XO.X..",
        "..X..XX...",
        "...X.OO.O.",
        "..X.O.....",
        ".....O..X.",
        "..........",
    }},
    {"novcf_6fours_10x10_3", 10, false, 1, THREAT_VCF, false, 0, {
        "..........",
        "...XOOX...",
        "..XX...X..",
        ".X...OO.X.",
        "..OOX...X.",
        ".....OO.X.",
        ".O.X..XOO.",
        ".X..O.OX..",
        "..X..O..O.",
        "..........",
    }},
    {"vcf5_10x10_1", 10, false, 1, THREAT_VCF, true, 5, {
        "..........",
        "..OO....X.",
        "...O..X...",
        ".O...XX.O.",
        "..........",
        ".O..X.....",
        "..X....O..",
        ".....X....",
        "...X...O..",
        "..........",
    }},
    {"vcf5_10x10_2", 10, false, 1, THREAT_VCF, true, 5, {
        "..........",
        "....XO....",
        "..XOX.....",
        "..........",
        ".OO..XXO..",
        "....X..O..",
        "..........",
        "..XO....X.",
        ".OX..O....",
        "..........",
    }},
    {"vcf6_10x10_1", 10, false, 1, THREAT_VCF, true, 6, {
        "..........",
        "....XX..X.",
        ".O.....X..",
        "....XOO.X.",
        ".XO.......",
        ".....X.OO.",
        "...O...O..",
        "..O....O..",
        "...X..X...",
        "..........",
    }},
    {"vcf9_10x10_1", 10, false, 1, THREAT_VCF, true, 9, {
        "..........",
        "...XO.O...",
        "....O...O.",
        ".X........",
        "....X.OO..",
        "...X.OX...",
        "..........",
        "..O..X....",
        "..XX......",
        "..........",
    }},
    {"vcf6_10x10_2", 10, false, 1, THREAT_VCF, true, 6, {
        "..........",
        "...O..OX..",
        ".O...O.X..",
        ".....X.O..",
        "...X...X..",
        "..O....O..",
        "..O.X.O.X.",
        "...X......",
        "...X......",
        "..........",
    }},
    {"vcf7_10x10_1", 10, false, 1, THREAT_VCF, true, 7, {
        "..........",
        "..........",
        "..........",
        ".....X....",
        "...OX.XX..",
        "......O...",
        "..O.O.OXO.",
        ".....XX.O.",
        "......OX..",
        "..........",
    }},
    {"vcf5_10x10_exact_1", 10, true, 1, THREAT_VCF, true, 5, {
        "..........",
        "......O.X.",
        "......OXX.",
        "...O....X.",
        ".O..XO..O.",
        "......X.X.",
        ".O..X.....",
        "......OO..",
        ".X.XXO.O..",
        "..........",
    }},
    {"vcf3_10x10_exact_1", 10, true, 1, THREAT_VCF, true, 3, {
        "..........",
        ".......X..",
        ".X.....OO.",
        ".X.X....X.",
        ".....OO...",
        "..XX......",
        ".X.O.OO.O.",
        "....O..OX.",
        ".O.X....X.",
        "..........",
    }},
    {"novcf_4fours_10x10_exact_1", 10, true, 1, THREAT_VCF, false, 0, {
        "..........",
        ".X.X...XO.",
        ".O.O....O.",
        ".O.O......",
        "....O.X.X.",
        ".XX.XOO...",
        "..X.OO.OX.",
        "....X.XXO.",
        "...XOOOXX.",
        "..........",
    }},
    {"vcf3_10x10_exact_2", 10, true, 1, THREAT_VCF, true, 3, {
        "..........",
        "....XO.X..",
        "..........",
        "....OXX...",
        ".X...O.O..",
        "...X..X.X.",
        "..........",
        "..OOO.....",
        ".O........",
        "..........",
    }},
    {"vcf4_10x10_exact_1", 10, true, 1, THREAT_VCF, true, 4, {
        "..........",
        "...XO...X.",
        "...O..X...",
        "..O...O...",
        "..........",
        "....OX..O.",
        ".O....XO..",
        ".X........",
        ".O.X..XX..",
        "..........",
    }},
    {"vcf4_10x10_exact_2", 10, true, 1, THREAT_VCF, true, 4, {
        "..........",
        ".....O..X.",
        "..X..X....",
        "...OO...X.",
        ".X..O.X...",
        "..O.X.X.O.",
        ".XO..O.X..",
        ".....O..X.",
        "....O...O.",
        "..........",
    }},
    {"novcf_6fours_10x10_exact_2", 10, true, 1, THREAT_VCF, false, 0, {
        "..........",
        ".O.X.OO...",
        "...X..XX..",
        ".....OO...",
        ".O.X......",
        "...O......",
        ".....XX...",
        "....O..O..",
        "...X...X..",
        "..........",
    }},
    {"vcf7_10x10_exact_1", 10, true, 1, THREAT_VCF, true, 7, {
        "..........",
        "..O.X..XO.",
        "...OOOX.X.",
        ".XX..X.O..",
        "..X.OOXXO.",
        ".O.....XX.",
        "..OO.X....",
        "..O..XOX..",
        ".X.....OO.",
        "..........",
    }},
    {"novcf_4fours_10x10_exact_3", 10, true, 1, THREAT_VCF, false, 0, {
        "..........",
        ".....OOX..",
        "..........",
        ".O..O.....",
        ".......O..",
        ".X..O.X...",
        "..OX..OX..",
        ".OX.X.O.X.",
        "...X....X.",
        "..........",
    }},
    {"vcf5_10x10_exact_2", 10, true, 1, THREAT_VCF, true, 5, {
        "..........",
        ".O.X..O...",
        "....XXOX..",
        ".OOOXXO.O.",
        "..X...X.O.",
        ".......XO.",
        ".....OX.X.",
        ".OXO......",
        "..XO..X...",
        "..........",
    }},
    {"vcf6_10x10_exact_1", 10, true, 1, THREAT_VCF, true, 6, {
        "..........",
        "....XXXO..",
        ".X...X.O..",
        "..........",
        ".....O....",
        ".XOXXXOOX.",
        "...OOX.X..",
        "......OOX.",
        "..O...O.O.",
        "..........",
    }},
    {"vcf7_10x10_exact_2", 10, true, 1, THREAT_VCF, true, 7, {
        "..........",
        ".....OXX..",
        "...X..XO..",
        "....X...X.",
        "........O.",
        "..XO...O..",
        "....XO....",
        "....O...X.",
        "..O.O.....",
        "..........",
    }},
    {"vcf6_10x10_exact_2", 10, true, 1, THREAT_VCF, true, 6, {
        "..........",
        "..XXO.OO..",
        ".OO....X..",
        "..OX..XO..",
        "..X.....X.",
        "..........",
        "......XXO.",
        "...O..O...",
        ".O.X.XXO..",
        "..........",
    }},
    {"vcf3_12x12_1", 12, false, 1, THREAT_VCF, true, 3, {
        "............",
        "............",
        "..X.X....O..",
        ".....X..XO..",
        "..OX......O.",
        "..O..X.OX...",
        "..XX........",
        ".X..........",
        "......X.OO..",
        "...X.....O..",
        ".OXO..O...O.",
        "............",
    }},
    {"novcf_4fours_12x12_1", 12, false, 1, THREAT_VCF, false, 0, {
        "............",
        ".O..........",
        "...O...O....",
        "............",
        "...X.X....X.",
        "...O......O.",
        "......XO.X..",
        "............",
        "....X.......",
        ".OX.O.X..O..",
        "..XO..X.....",
        "............",
    }},
    {"vcf3_12x12_2", 12, false, 1, THREAT_VCF, true, 3, {
        "............",
        ".O..X.....X.",
        "..........O.",
        "...XXO.X.O..",
        ".OX....X..X.",
        "..X.XO.O....",
        "............",
        ".X.X........",
        ".O..........",
        ".O..O.....O.",
        "..X...O.O...",
        "............",
    }},
    {"vcf4_12x12_1", 12, false, 1, THREAT_VCF, true, 4, {
        "............",
        "..O.........",
        "...X......X.",
        "..........X.",
        "...OO.......",
        ".XO.........",
        "..X..X.X.O..",
        "..O......O..",
        "...O.O.X.OX.",
        "....OX...XO.",
        ".......X....",
        "............",
    }},
    {"vcf4_12x12_2", 12, false, 1, THREAT_VCF, true, 4, {
        "............",
        ".........XO.",
        "......X..O..",
        "...O.O......",
        ".........O..",
        "......X.OO..",
        ".X....X.....",
        "..OX.....O..",
        ".....X...X..",
        ".O.OX..O.XX.",
        "...OX.XO..X.",
        "............",
    }},
    {"vcf5_12x12_1", 12, false, 1, THREAT_VCF, true, 5, {
        "............",
        ".OO.X.XO.X..",
        "..OO....X...",
        ".X.....O.O..",
        "........X...",
        "........X...",
        ".O......OX..",
        ".X.O.O..OX..",
        ".X..........",
        ".X......X...",
        "..O......XO.",
        "............",
    }},
    {"vcf5_12x12_2", 12, false, 1, THREAT_VCF, true, 5, {
        "............",
        ".O.XO..X..O.",
        "...X..O.....",
        "..O....X....",
        ".....X.O....",
        "..O.....O.X.",
        ".XX..O.XX...",
        "............",
        "...O......O.",
        "....O.X.X...",
        "............",
        "............",
    }},
    {"novcf_4fours_12x12_2", 12, false, 1, THREAT_VCF, false, 0, {
        "............",
        "...X..X.....",
        ".......OO...",
        ".O....O.....",
        ".O.X.....O..",
        ".X.X..O..O..",
        "............",
        "............",
        ".........OX.",
        ".........X..",
        "......X.X...",
        "............",
    }},
    {"vcf8_12x12_1", 12, false, 1, THREAT_VCF, true, 8, {
        "............",
        "...X......X.",
        ".....OX.X...",
        ".....XO.....",
        "..........X.",
        ".O....OX....",
        ".O.O......O.",
        "..........O.",
        "...O....X...",
        "..O....O.X..",
        "..X.....X...",
        "............",
    }},
    {"novcf_4fours_12x12_3", 12, false, 1, THREAT_VCF, false, 0, {
        "............",
        ".....X......",
        "..........X.",
        ".O.XO.......",
        "...XO.......",
        "......O.....",
        ".X..O...X.O.",
        ".....X.X....",
        "...OX.X.....",
        "...X.O..O...",
        "..O..O......",
        "............",
    }},
    {"vcf6_12x12_1", 12, false, 1, THREAT_VCF, true, 6, {
        "............",
        ".XO...OO.X..",
        "...O........",
        "...OX..X....",
        ".O.......OX.",
        ".X.O.X..XOX.",
        "..X.O...X...",
        ".X.O........",
        "...X......O.",
        "..O.........",
        ".O...X......",
        "............",
    }},
    {"vcf6_12x12_2", 12, false, 1, THREAT_VCF, true, 6, {
        "............",
        ".OOO.X....O.",
        "............",
        ".X.......O..",
        ".........X..",
        "...X.X......",
        ".XO.X.OO....",
        "..O..O...O..",
        "......X.....",
        ".X.X.O.XX...",
        "...O...X....",
        "............",
    }},
    {"vcf8_12x12_2", 12, false, 1, THREAT_VCF, true, 8, {
        "............",
        "........X...",
        "...O........",
        "...XO.....O.",
        ".X...X...X..",
        ".O.X.O......",
        "....X.......",
        ".......X....",
        "....O...X...",
        "..OOX.XX.O..",
        "...OO....O..",
        "............",
    }},
    {"vcf7_12x12_1", 12, false, 1, THREAT_VCF, true, 7, {
        "............",
        ".O.O...O....",
        ".....O......",
        "....XOX.O...",
        ".O..OX......",
        "....XX.XOX..",
        "...OX.......",
        "..X...XO....",
        ".....O..O...",
        ".....X..X...",
        "......XX.O..",
        "............",
    }},
    /* long VCFs (the shortest of 10-12 attacker moves by the brute force), random
     * 15x15 positions kept from many for their length */
    {"vcf10_15x15_1", 15, false, 1, THREAT_VCF, true, 10, {
        "...............",
        "...............",
        "...............",
        "........XO.X...",
        "....O.....X....",
        "...O..XO.XX....",
        "....X...OO.....",
        "....X.X..X.....",
        "...O.X.....X...",
        "...X..O........",
        "....OOOX.OO....",
        "....XO.....O...",
        "...............",
        "...............",
        "...............",
    }},
    {"vcf11_15x15_1", 15, false, 1, THREAT_VCF, true, 11, {
        "...............",
        "...............",
        "...............",
        "........O......",
        ".......XO.OX...",
        "...O.XOOX......",
        "....X..O.O.....",
        ".......X.XXO...",
        "...X......OO...",
        "...O...........",
        "....OX...OXX...",
        "...X.X....OX...",
        "...............",
        "...............",
        "...............",
    }},
    {"vcf12_15x15_1", 15, false, 1, THREAT_VCF, true, 12, {
        "...............",
        "...............",
        "...............",
        "...OXXXO..X....",
        "...O....X..O...",
        "........OOXX...",
        "...X.X.....O...",
        "...O.O.XX..X...",
        "...O..XO.X.....",
        ".......O.O.O...",
        ".......X...O...",
        "...O.....X.....",
        "...............",
        "...............",
        "...............",
    }},
    {"vcf12_15x15_2", 15, false, 1, THREAT_VCF, true, 12, {
        "...............",
        "...............",
        "...............",
        "....XXO..O.O...",
        "....OOXX.O.....",
        "...X.OO....O...",
        ".......O..O....",
        ".....X...X.....",
        ".........X.....",
        "...X...XX......",
        "........O.OX...",
        ".......O..XX...",
        "...............",
        "...............",
        "...............",
    }},
    /* longer chains, built (not drawn): a line of three, then links of two stones that
     * each make a four with the previous link's four-point, every other window holding at
     * most two attacker stones or candidate points, ending in a double four; the
     * brute force confirms that no shorter VCF exists */
    {"vcf13_15x15_1", 15, false, 1, THREAT_VCF, true, 13, {
        "...............",
        "X.X..O....O....",
        ".X..X.....X....",
        ".X...X.........",
        "......XOX..XXO.",
        ".OX....O..XO...",
        "O..X.O.........",
        ".....O...XO....",
        "X..X.O.........",
        "X.X..........O.",
        "......X.X......",
        ".....O...X.X...",
        "O.X............",
        "...X.....X.O...",
        "...O.XX..O.....",
    }},
    {"vcf13_15x15_2", 15, false, 1, THREAT_VCF, true, 13, {
        "...O.X.........",
        "...............",
        ".....X.........",
        "O.X........O...",
        ".......X...X...",
        "O.X...O..XX.OX.",
        "...X.X...O..X..",
        "..........O....",
        "........O..X...",
        ".OX..OOX.OXO...",
        "..........X....",
        "OX...X.X..X....",
        "...............",
        "X.X..O...XO....",
        ".XO......O.XX.X",
    }},
    {"vcf14_15x15_1", 15, false, 1, THREAT_VCF, true, 14, {
        ".......OO......",
        "....OX..X.O....",
        ".....X....X....",
        "....X.O.O....O.",
        ".X.....XX...XX.",
        "....O..........",
        ".O.XX...X.....O",
        "..........X..X.",
        ".....OO.XOX...X",
        ".O..XX..O...OOO",
        "..X............",
        "....O.......X..",
        "...........X...",
        ".X...X...O.XX.X",
        "O....O.XX..O...",
    }},
    {"vcf15_15x15_1", 15, false, 1, THREAT_VCF, true, 15, {
        "....X..X.......",
        ".......O.......",
        "...OX.X..X.O...",
        "...............",
        ".....X........X",
        "..OXO...X..XO..",
        "...........XX..",
        ".OX..OX.X.O....",
        "....XO...O.O...",
        "..XXO....O...O.",
        ".....X....X.X..",
        "..O...X...XX...",
        "..X....X.......",
        "...X......O....",
        "OX.X.XOO..X.XO.",
    }},
};

static const tcase vct_cases[] = {
    /* A double three: (5,6) makes two open threes; O has no counterplay. */
    {"vct_double_three", 11, false, 1, THREAT_VCT, true, 0, {
        "...........",
        "...........",
        "...........",
        "......X....",
        "......X....",
        "....XX.....",
        "...........",
        "..O........",
        "........O..",
        "...........",
        "O..........",
    }},
    /* The same with O's closed three on row 9: O's counter-four only delays the loss. */
    {"vct_double_three_counter_four_fails", 11, false, 1, THREAT_VCT, true, 0, {
        "...........",
        "...........",
        "...........",
        "......X....",
        "......X....",
        "....XX.....",
        "...........",
        "..O........",
        "........O..",
        "XOOO.......",
        "O..........",
    }},
    /* The same with O's double-four point at (9,4): any X three is answered by O's
     * counter-four there, which wins. A VCT that ignores counter-fours claims a win. */
    {"vct_refuted_by_double_four", 11, false, 1, THREAT_VCT, false, 0, {
        "...........",
        "...........",
        "...........",
        "......X....",
        "......X....",
        "....XX.....",
        "....O......",
        "..O.O......",
        "....O...O..",
        "XOOO.......",
        "O..........",
    }},
    /* The double three under exact five: the open fours stay exact. */
    {"vct_double_three_exact", 11, true, 1, THREAT_VCT, true, 0, {
        "...........",
        "...........",
        "...........",
        "......X....",
        "......X....",
        "....XX.....",
        "...........",
        "..O........",
        "........O..",
        "...........",
        "O..........",
    }},
    {"vct_10x10_1", 10, false, 1, THREAT_VCT, true, 0, {
        "..........",
        "....X.....",
        "..O.......",
        "..OO...O..",
        ".O.X...X..",
        "..O...X...",
        "...XX.....",
        "..XO......",
        "..........",
        "..........",
    }},
    {"vct_10x10_2", 10, false, 1, THREAT_VCT, true, 0, {
        "..........",
        "..O..XO.O.",
        "......XXO.",
        "..XO....X.",
        "...X..X...",
        ".OXX.XOO..",
        ".O.....X..",
        "..O.X..O..",
        ".......O..",
        "..........",
    }},
    {"vct_refuted_10x10_1", 10, false, 1, THREAT_VCT, false, 0, {
        "..........",
        "..........",
        "...X......",
        ".....X....",
        "..OX.O.O..",
        "..X.....X.",
        "...O......",
        ".XO.......",
        ".......O..",
        "..........",
    }},
    {"vct_10x10_3", 10, false, 1, THREAT_VCT, true, 0, {
        "..........",
        ".O......O.",
        "..........",
        "..OX......",
        "..XX....O.",
        "........X.",
        "......X...",
        ".OXO......",
        "..........",
        "..........",
    }},
    {"vct_10x10_4", 10, false, 1, THREAT_VCT, true, 0, {
        "..........",
        "..O.......",
        "..........",
        ".OO.......",
        "..........",
        "..X.X...O.",
        ".X...O....",
        "........O.",
        ".XX.XO..X.",
        "..........",
    }},
    {"vct_refuted_10x10_2", 10, false, 1, THREAT_VCT, false, 0, {
        "..........",
        ".OO.O..O..",
        ".X....X...",
        "....X.X...",
        "..O.OX.O..",
        "..XX.OO...",
        "..OO...XX.",
        ".XX.OXX.O.",
        "...X.OO.X.",
        "..........",
    }},
    {"vct_refuted_10x10_3", 10, false, 1, THREAT_VCT, false, 0, {
        "..........",
        "...XO..O..",
        ".O..O.OOX.",
        "..OX.X..O.",
        "..X...XX..",
        ".X....O...",
        ".X......O.",
        ".O..XOX.O.",
        "...X.OXX..",
        "..........",
    }},
    {"vct_10x10_5", 10, false, 1, THREAT_VCT, true, 0, {
        "..........",
        "...XX.....",
        ".....O.OX.",
        ".....O....",
        ".X.XO...X.",
        "......OO..",
        ".O.O.X....",
        "..X.X...O.",
        "....OX.OX.",
        "..........",
    }},
    {"vct_10x10_6", 10, false, 1, THREAT_VCT, true, 0, {
        "..........",
        "..X.O.....",
        "...X..OX..",
        ".....O....",
        "...X..X...",
        "..O....OX.",
        ".O....X...",
        "..........",
        "......O...",
        "..........",
    }},
    {"vct_10x10_7", 10, false, 1, THREAT_VCT, true, 0, {
        "..........",
        "..........",
        "..O.....O.",
        "..O.X.....",
        "...XOXX...",
        "......O...",
        "..O.......",
        "...X.X.X..",
        "......O...",
        "..........",
    }},
    {"vct_refuted_10x10_4", 10, false, 1, THREAT_VCT, false, 0, {
        "..........",
        "..XX..O...",
        "...XO..XO.",
        "..O.XX.O..",
        "....XO....",
        "........O.",
        "..O....O..",
        ".O.X......",
        "..XX.O..X.",
        "..........",
    }},
    {"vct_10x10_8", 10, false, 1, THREAT_VCT, true, 0, {
        "..........",
        ".......OO.",
        ".....O....",
        "...XX.....",
        ".X...OXX..",
        ".XO.OXXX..",
        ".O....O.O.",
        "..........",
        "..........",
        "..........",
    }},
    {"vct_refuted_10x10_5", 10, false, 1, THREAT_VCT, false, 0, {
        "..........",
        "...X...O..",
        ".....X.X..",
        ".O...X..O.",
        "...X.OO.X.",
        ".....X.X..",
        ".O....O...",
        ".O.X.X.O..",
        ".XX.OOO...",
        "..........",
    }},
    {"vct_refuted_10x10_6", 10, false, 1, THREAT_VCT, false, 0, {
        "..........",
        ".O..O..X..",
        ".X..OX.O..",
        "...XXOX...",
        "....O.O...",
        ".O.X.OO...",
        "....X.X...",
        "....O..X..",
        ".....XOX..",
        "..........",
    }},
};

enum { MAXN = 16 * 16, PVMAX = 512 };

/* ---- the brute-force rules (no windows, no solver code) --------------------------- */

typedef struct bf_board {
    int rows, cols, k;
    bool exact;
    uint8_t b[MAXN];
} bf_board;

static int bf_run(const bf_board *x, int cell, int color, int dr, int dc)
{
    int r = cell / x->cols, c = cell % x->cols, n = 1;
    for (int s = -1; s <= 1; s += 2)
        for (int rr = r + s * dr, cc = c + s * dc; rr >= 0 && rr < x->rows && cc >= 0 &&
                                                   cc < x->cols && x->b[rr * x->cols + cc] == color;
             rr += s * dr, cc += s * dc)
            n++;
    return n;
}

/* Would color on the empty cell complete a line (k, or more when not exact)? */
static bool bf_makes_five(const bf_board *x, int cell, int color)
{
    static const int d[4][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};
    if (x->b[cell])
        return false;
    for (int i = 0; i < 4; i++) {
        int n = bf_run(x, cell, color, d[i][0], d[i][1]);
        if (x->exact ? n == x->k : n >= x->k)
            return true;
    }
    return false;
}

static int bf_fives(const bf_board *x, int color, int *out)
{
    int n = 0;
    for (int i = 0; i < x->rows * x->cols; i++)
        if (bf_makes_five(x, i, color)) {
            if (out)
                out[n] = i;
            n++;
        }
    return n;
}

/* Does color have a move after which it has two completion points (a "three")? */
static bool bf_has_double_follow_up(bf_board *x, int color)
{
    for (int m = 0; m < x->rows * x->cols; m++) {
        if (x->b[m])
            continue;
        x->b[m] = (uint8_t)color;
        int n = bf_fives(x, color, NULL);
        x->b[m] = 0;
        if (n >= 2)
            return true;
    }
    return false;
}

/* Can color at the empty cell make a four or five? Only if some line through it holds
 * k-2 of color's stones within k-1 points, with none of the other colour between: a
 * necessary condition, so the brute force below skips no four by it. */
static bool bf_could_four(const bf_board *x, int cell, int color)
{
    static const int d[4][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};
    int r = cell / x->cols, c = cell % x->cols;
    for (int i = 0; i < 4; i++) {
        int n = 0;
        for (int s = -1; s <= 1; s += 2)
            for (int j = 1; j < x->k; j++) {
                int rr = r + s * j * d[i][0], cc = c + s * j * d[i][1];
                if (rr < 0 || rr >= x->rows || cc < 0 || cc >= x->cols)
                    break;
                int v = x->b[rr * x->cols + cc];
                if (v && v != color)
                    break;
                n += v == color;
            }
        if (n >= x->k - 2)
            return true;
    }
    return false;
}

/* bf_fives restricted to the points on the four lines through cell, within k-1 of it:
 * after a stone at cell, the only completion points it can have made. */
static int bf_fives_near(const bf_board *x, int color, int cell, int *out)
{
    static const int d[4][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};
    int r = cell / x->cols, c = cell % x->cols, n = 0;
    for (int i = 0; i < 4; i++)
        for (int j = -(x->k - 1); j < x->k; j++) {
            int rr = r + j * d[i][0], cc = c + j * d[i][1];
            if (j == 0 || rr < 0 || rr >= x->rows || cc < 0 || cc >= x->cols)
                continue;
            int p = rr * x->cols + cc;
            bool seen = false;
            for (int q = 0; q < n && !seen; q++)
                seen = out[q] == p;
            if (!seen && bf_makes_five(x, p, color))
                out[n++] = p;
        }
    return n;
}

/* A VCF win for att (to move) within depth attacker moves (the completing move
 * counted), by trying every point (that could make a four). */
static bool bf_vcf(bf_board *x, int att, int depth)
{
    int def = 3 - att, f[MAXN];
    if (bf_fives(x, att, NULL) > 0)
        return true;
    if (depth <= 1)
        return false;
    int nd = bf_fives(x, def, f);
    if (nd >= 2)
        return false;
    for (int m = 0; m < x->rows * x->cols; m++) {
        if (x->b[m] || (nd == 1 && m != f[0]) || !bf_could_four(x, m, att))
            continue;
        x->b[m] = (uint8_t)att;
        int fa[MAXN];
        /* att had no completion point before m (else it had won above) */
        int na = bf_fives_near(x, att, m, fa);
        bool win = false;
        if (na >= 1 && bf_fives(x, def, NULL) == 0) {
            if (na >= 2) {
                win = true;
            } else {
                x->b[fa[0]] = (uint8_t)def;
                win = bf_vcf(x, att, depth - 1);
                x->b[fa[0]] = 0;
            }
        }
        x->b[m] = 0;
        if (win)
            return true;
    }
    return false;
}

static void load_case(const tcase *tc, bool swap, bf_board *x)
{
    memset(x, 0, sizeof *x);
    x->rows = x->cols = tc->size;
    x->k = 5;
    x->exact = tc->exact;
    for (int r = 0; r < tc->size; r++) {
        ck_assert_msg(tc->rows[r] && (int)strlen(tc->rows[r]) == tc->size, "%s: row %d", tc->name, r);
        for (int c = 0; c < tc->size; c++) {
            char ch = tc->rows[r][c];
            int v = ch == 'X' ? 1 : ch == 'O' ? 2 : 0;
            ck_assert_msg(v || ch == '.', "%s: bad cell '%c'", tc->name, ch);
            if (swap && v)
                v = 3 - v;
            x->b[r * tc->size + c] = (uint8_t)v;
        }
    }
}

static threat_solver *new_solver(const bf_board *x)
{
    char err[256];
    threat_solver *t = threat_new(x->rows, x->cols, x->k, x->exact, 16, err, sizeof err);
    ck_assert_msg(t != NULL, "%s", err);
    return t;
}

/* Checks a winning line move by move on a copy of x; returns the attacker's moves. */
static int check_line(const char *name, const bf_board *x0, int att, threat_kind kind,
                      const int *pv, int len)
{
    bf_board x = *x0;
    int def = 3 - att, f[MAXN], moves = 0;
    ck_assert_msg(len >= 1 && len % 2 == 1, "%s: line of %d moves should end with the attacker",
                  name, len);
    for (int i = 0; i < len; i++) {
        int cell = pv[i];
        ck_assert_msg(cell >= 0 && cell < x.rows * x.cols && !x.b[cell], "%s: move %d (%d) not empty",
                      name, i, cell);
        if (i % 2 == 0) {
            moves++;
            if (i == len - 1) {
                ck_assert_msg(bf_makes_five(&x, cell, att), "%s: last move does not complete five", name);
                break;
            }
            int nd = bf_fives(&x, def, f);
            bool block = nd == 1 && f[0] == cell;
            x.b[cell] = (uint8_t)att;
            int na = bf_fives(&x, att, NULL);
            if (kind == THREAT_VCF)
                ck_assert_msg(na >= 1, "%s: attacker move %d is not a four", name, i);
            else
                ck_assert_msg(na >= 1 || block || bf_has_double_follow_up(&x, att),
                              "%s: attacker move %d is neither a four, a three nor a forced block",
                              name, i);
            ck_assert_msg(nd == 0 || block, "%s: attacker move %d ignores the defender's four", name, i);
        } else {
            ck_assert_msg(bf_fives(&x, def, NULL) == 0, "%s: the defender could win at move %d", name, i);
            int na = bf_fives(&x, att, f);
            if (na >= 1) {
                bool on = false;
                for (int j = 0; j < na; j++)
                    on |= f[j] == cell;
                ck_assert_msg(on, "%s: defence %d does not block the four", name, i);
            } else {
                ck_assert_msg(kind == THREAT_VCT, "%s: VCF defence %d with no four to block", name, i);
            }
            x.b[cell] = (uint8_t)def;
        }
    }
    return moves;
}

static threat_status solve(threat_solver *t, const bf_board *x, int att, threat_kind kind,
                           long budget, int *pv, int *len)
{
    char err[256] = "";
    threat_status st = threat_solve(t, x->b, att, kind, budget, 0, 4, pv, PVMAX, len, err, sizeof err);
    ck_assert_msg(st != THREAT_ERROR, "%s", err);
    return st;
}

/* ---- VCF --------------------------------------------------------------------------- */

START_TEST(vcf_positions)
{
    int n = (int)(sizeof vcf_cases / sizeof vcf_cases[0]);
    ck_assert_int_ge(n, 40);
    int wins = 0, nones = 0;
    for (int i = 0; i < n; i++) {
        const tcase *tc = &vcf_cases[i];
        for (int swap = 0; swap < 2; swap++) {
            bf_board x;
            load_case(tc, swap, &x);
            int att = swap ? 3 - tc->attacker : tc->attacker;
            threat_solver *t = new_solver(&x);
            int pv[PVMAX], len;
            threat_status st = solve(t, &x, att, THREAT_VCF, 2000000, pv, &len);
            ck_assert_msg(st == (tc->win ? THREAT_WIN : THREAT_NONE), "%s%s: %s", tc->name,
                          swap ? " (colours swapped)" : "", threat_status_to_string(st));
            if (tc->win) {
                int moves = check_line(tc->name, &x, att, THREAT_VCF, pv, len);
                ck_assert_msg(moves >= tc->min_moves, "%s: %d attacker moves, shortest is %d",
                              tc->name, moves, tc->min_moves);
                wins++;
            } else {
                nones++;
            }
            /* VCT finds every VCF win too */
            st = solve(t, &x, att, THREAT_VCT, 2000000, pv, &len);
            if (tc->win) {
                ck_assert_msg(st == THREAT_WIN, "%s: VCT misses the VCF", tc->name);
                check_line(tc->name, &x, att, THREAT_VCT, pv, len);
            }
            threat_free(t);
        }
    }
    ck_assert_int_ge(wins, 2 * 25);
    ck_assert_int_ge(nones, 2 * 9);
}
END_TEST

/* The listed shortest lengths are what the brute-force search finds. */
START_TEST(vcf_lengths_match_brute_force)
{
    int n = (int)(sizeof vcf_cases / sizeof vcf_cases[0]);
    for (int i = 0; i < n; i++) {
        const tcase *tc = &vcf_cases[i];
        bf_board x;
        load_case(tc, false, &x);
        if (tc->win) {
            ck_assert_msg(bf_vcf(&x, tc->attacker, tc->min_moves), "%s: no VCF of %d", tc->name,
                          tc->min_moves);
            ck_assert_msg(!bf_vcf(&x, tc->attacker, tc->min_moves - 1), "%s: a VCF shorter than %d",
                          tc->name, tc->min_moves);
        } else if (tc->size <= 10) {
            ck_assert_msg(!bf_vcf(&x, tc->attacker, 9), "%s: brute force finds a VCF", tc->name);
        }
    }
}
END_TEST

/* Random clustered positions: the solver's VCF verdict equals the brute force's. */
START_TEST(vcf_agrees_with_brute_force_on_random_positions)
{
    unsigned seed = 4242;
    int checked = 0, wins = 0;
    for (int exact = 0; exact < 2; exact++) {
        bf_board x;
        memset(&x, 0, sizeof x);
        x.rows = x.cols = 9;
        x.k = 5;
        x.exact = exact;
        threat_solver *t = new_solver(&x);
        for (int it = 0; it < 250; it++) {
            memset(x.b, 0, sizeof x.b);
            seed = seed * 1103515245u + 12345u;
            int ns = 6 + (int)((seed >> 16) % 10);
            for (int s = 0; s < 2 * ns; s++) {
                int cell;
                do {
                    seed = seed * 1103515245u + 12345u;
                    cell = (int)((seed >> 8) % 81u);
                } while (x.b[cell]);
                x.b[cell] = (uint8_t)(1 + (s & 1));
            }
            bool done = false;
            for (int c = 0; c < 81 && !done; c++)
                if (x.b[c]) {
                    int v = x.b[c];
                    x.b[c] = 0;
                    done = bf_makes_five(&x, c, v);
                    x.b[c] = (uint8_t)v;
                }
            if (done)
                continue; /* a finished game */
            int pv[PVMAX], len;
            threat_status st = solve(t, &x, 1, THREAT_VCF, 2000000, pv, &len);
            bool bf = bf_vcf(&x, 1, 12);
            ck_assert_msg((st == THREAT_WIN) == bf, "random position %d: solver %s, brute force %d", it,
                          threat_status_to_string(st), bf);
            if (bf) {
                check_line("random", &x, 1, THREAT_VCF, pv, len);
                wins++;
            }
            checked++;
        }
        threat_free(t);
    }
    ck_assert_int_ge(checked, 300);
    ck_assert_int_ge(wins, 20);
}
END_TEST

/* A table of 1,024 entries loses entries during a search: the line is still read back
 * (re-proven where needed) and still checks. */
START_TEST(small_table_still_gives_lines)
{
    int n = (int)(sizeof vcf_cases / sizeof vcf_cases[0]), wins = 0;
    char err[256];
    for (int i = 0; i < n; i++) {
        const tcase *tc = &vcf_cases[i];
        bf_board x;
        load_case(tc, false, &x);
        threat_solver *t = threat_new(x.rows, x.cols, 5, x.exact, 10, err, sizeof err);
        ck_assert_msg(t != NULL, "%s", err);
        int pv[PVMAX], len;
        for (int kind = 0; kind < 2; kind++) {
            threat_status st = solve(t, &x, tc->attacker, (threat_kind)kind, 2000000, pv, &len);
            if (tc->win) {
                ck_assert_msg(st == THREAT_WIN, "%s: %s", tc->name, threat_status_to_string(st));
                check_line(tc->name, &x, tc->attacker, (threat_kind)kind, pv, len);
                wins++;
            } else if (kind == THREAT_VCF) {
                ck_assert_int_eq(st, THREAT_NONE);
            }
        }
        threat_free(t);
    }
    ck_assert_int_ge(wins, 60);
}
END_TEST

/* ---- VCT --------------------------------------------------------------------------- */

/* After the line's first attacker move, every empty point as the defender's reply still
 * leaves the attacker a win (VCT): the defence set missed nothing at that level. */
static void check_every_reply_loses(const char *name, threat_solver *t, const bf_board *x0, int att,
                                    int first)
{
    bf_board x = *x0;
    x.b[first] = (uint8_t)att;
    int def = 3 - att;
    for (int r = 0; r < x.rows * x.cols; r++) {
        if (x.b[r])
            continue;
        x.b[r] = (uint8_t)def;
        if (bf_fives(&x, def, NULL) == 0 && bf_fives(&x, def, NULL) == 0) {
            bool completed = false;
            for (int c = 0; c < x.rows * x.cols && !completed; c++)
                if (x.b[c] == def) {
                    x.b[c] = 0;
                    completed = bf_makes_five(&x, c, def);
                    x.b[c] = (uint8_t)def;
                }
            ck_assert_msg(!completed, "%s: reply %d completes five for the defender", name, r);
            int pv[PVMAX], len;
            threat_status st = solve(t, &x, att, THREAT_VCT, 2000000, pv, &len);
            ck_assert_msg(st == THREAT_WIN, "%s: reply %d refutes the VCT (%s)", name, r,
                          threat_status_to_string(st));
            check_line(name, &x, att, THREAT_VCT, pv, len);
        }
        x.b[r] = 0;
    }
}

START_TEST(vct_positions)
{
    int n = (int)(sizeof vct_cases / sizeof vct_cases[0]);
    int wins = 0, refuted = 0;
    char err[256];
    for (int i = 0; i < n; i++) {
        const tcase *tc = &vct_cases[i];
        bf_board x;
        load_case(tc, false, &x);
        int att = tc->attacker;
        threat_solver *t = new_solver(&x);
        int pv[PVMAX], len;
        ck_assert_msg(solve(t, &x, att, THREAT_VCF, 2000000, pv, &len) == THREAT_NONE,
                      "%s: has a VCF", tc->name);
        threat_status st = solve(t, &x, att, THREAT_VCT, 2000000, pv, &len);
        ck_assert_msg(st == (tc->win ? THREAT_WIN : THREAT_NONE), "%s: %s", tc->name,
                      threat_status_to_string(st));
        if (tc->win) {
            check_line(tc->name, &x, att, THREAT_VCT, pv, len);
            check_every_reply_loses(tc->name, t, &x, att, pv[0]);
            wins++;
        } else {
            /* An unsound VCT that ignores counter-fours claims a win; on its line the
             * defender has a four after which the attacker has no VCT. */
            threat_solver *nv = new_solver(&x);
            threat_set_naive(nv, true);
            int npv[PVMAX], nlen;
            ck_assert_int_eq(threat_solve(nv, x.b, att, THREAT_VCT, 2000000, 0, 4, npv, PVMAX, &nlen,
                                          err, sizeof err), THREAT_WIN);
            bf_board y = x;
            bool refutes = false;
            for (int j = 0; j < nlen && !refutes; j++) {
                if (j % 2 == 1) {
                    for (int r = 0; r < y.rows * y.cols && !refutes; r++) {
                        if (y.b[r])
                            continue;
                        y.b[r] = (uint8_t)(3 - att);
                        if (bf_fives(&y, 3 - att, NULL) >= 1) {
                            int p2[PVMAX], l2;
                            refutes = solve(t, &y, att, THREAT_VCT, 2000000, p2, &l2) != THREAT_WIN;
                        }
                        y.b[r] = 0;
                    }
                }
                y.b[npv[j]] = (uint8_t)(j % 2 == 0 ? att : 3 - att);
            }
            ck_assert_msg(refutes, "%s: no counter-four refutes the naive line", tc->name);
            threat_free(nv);
            refuted++;
        }
        threat_free(t);
    }
    ck_assert_int_ge(wins, 8);
    ck_assert_int_ge(refuted, 5);
}
END_TEST

/* ---- bad input, budgets, defences, hooks ------------------------------------------ */

START_TEST(bad_input_is_refused)
{
    char err[256];
    int pv[8], len;
    ck_assert(threat_new(3, 3, 3, false, 16, err, sizeof err) == NULL);
    ck_assert_msg(strstr(err, "k = 3"), "%s", err);
    ck_assert(threat_new(15, 15, 5, false, 40, err, sizeof err) == NULL);
    ck_assert_msg(strstr(err, "tt_log2"), "%s", err);
    bf_board x;
    load_case(&vcf_cases[0], false, &x);
    threat_solver *t = new_solver(&x);
    ck_assert_int_eq(threat_solve(t, x.b, 1, THREAT_VCF, 0, 0, 1, pv, 8, &len, err, sizeof err),
                     THREAT_ERROR);
    ck_assert_msg(strstr(err, "budget 0"), "%s", err);
    ck_assert_int_eq(threat_solve(t, x.b, 1, THREAT_VCF, -5, 0, 1, pv, 8, &len, err, sizeof err),
                     THREAT_ERROR);
    ck_assert_msg(strstr(err, "budget -5"), "%s", err);
    ck_assert_int_eq(threat_solve(t, x.b, 3, THREAT_VCF, 100, 0, 1, pv, 8, &len, err, sizeof err),
                     THREAT_ERROR);
    ck_assert_msg(strstr(err, "attacker 3"), "%s", err);
    ck_assert_int_eq(threat_solve(t, x.b, 1, THREAT_VCT, 100, 0, 0, pv, 8, &len, err, sizeof err),
                     THREAT_ERROR);
    ck_assert_msg(strstr(err, "VCT depth 0"), "%s", err);
    bool found;
    uint8_t mask[MAXN];
    ck_assert_int_eq(threat_defences(t, x.b, 1, 0, mask, &found, err, sizeof err), -1);
    /* a finished game */
    bf_board y;
    memset(&y, 0, sizeof y);
    y.rows = y.cols = x.rows;
    for (int c = 0; c < 5; c++)
        y.b[3 * y.cols + c] = 2;
    ck_assert_int_eq(threat_solve(t, y.b, 1, THREAT_VCF, 100, 0, 1, pv, 8, &len, err, sizeof err),
                     THREAT_ERROR);
    ck_assert_msg(strstr(err, "line of 5"), "%s", err);
    y.b[5] = 7;
    ck_assert_int_eq(threat_solve(t, y.b, 1, THREAT_VCF, 100, 0, 1, pv, 8, &len, err, sizeof err),
                     THREAT_ERROR);
    threat_free(t);
    threat_free(NULL);
    ck_assert_str_eq(threat_status_to_string(THREAT_UNKNOWN), "unknown");
}
END_TEST

START_TEST(budget_runs_out)
{
    const tcase *deep = NULL;
    for (size_t i = 0; i < sizeof vcf_cases / sizeof vcf_cases[0]; i++)
        if (vcf_cases[i].win && (!deep || vcf_cases[i].min_moves > deep->min_moves))
            deep = &vcf_cases[i];
    ck_assert(deep && deep->min_moves >= 8);
    bf_board x;
    load_case(deep, false, &x);
    threat_solver *t = new_solver(&x);
    int pv[PVMAX], len;
    ck_assert_int_eq(solve(t, &x, 1, THREAT_VCF, 3, pv, &len), THREAT_UNKNOWN);
    ck_assert_int_eq(len, 0);
    ck_assert_int_le(threat_nodes(t), 4);
    ck_assert_int_eq(solve(t, &x, 1, THREAT_VCF, 2000000, pv, &len), THREAT_WIN);
    /* a short pv buffer truncates the line */
    char err[256];
    int short_pv[3];
    ck_assert_int_eq(threat_solve(t, x.b, 1, THREAT_VCF, 2000000, 0, 1, short_pv, 3, &len, err,
                                  sizeof err), THREAT_WIN);
    ck_assert_int_eq(len, 3);
    ck_assert_int_eq(short_pv[0], pv[0]);
    threat_free(t);
}
END_TEST

/* The side to move faces a VCF: every listed defence leaves no VCF, and a far-away
 * move leaves it. */
START_TEST(defences_stop_the_vcf)
{
    int tested = 0;
    for (size_t i = 0; i < sizeof vcf_cases / sizeof vcf_cases[0] && tested < 6; i++) {
        const tcase *tc = &vcf_cases[i];
        if (!tc->win)
            continue;
        bf_board x;
        load_case(tc, false, &x);
        threat_solver *t = new_solver(&x);
        uint8_t mask[MAXN];
        bool found;
        char err[256];
        int n = threat_defences(t, x.b, 2, 200000, mask, &found, err, sizeof err);
        ck_assert_msg(n >= 0, "%s", err);
        ck_assert_msg(found, "%s: the VCF is not found", tc->name);
        int pv[PVMAX], len;
        for (int c = 0; c < x.rows * x.cols; c++) {
            if (!mask[c])
                continue;
            ck_assert(!x.b[c]);
            x.b[c] = 2;
            threat_status st = solve(t, &x, 1, THREAT_VCF, 200000, pv, &len);
            ck_assert_msg(st != THREAT_WIN, "%s: defence %d still loses to a VCF", tc->name, c);
            x.b[c] = 0;
        }
        /* the corner is far from the line (these diagrams keep their edges empty) */
        if (!mask[0] && !x.b[0]) {
            x.b[0] = 2;
            ck_assert_int_eq(solve(t, &x, 1, THREAT_VCF, 200000, pv, &len), THREAT_WIN);
            x.b[0] = 0;
        }
        /* no VCF to answer: 0, found false */
        n = threat_defences(t, x.b, 1, 200000, mask, &found, err, sizeof err);
        if (!found)
            ck_assert_int_eq(n, 0);
        threat_free(t);
        tested++;
    }
    ck_assert_int_eq(tested, 6);
}
END_TEST

typedef struct forbid_ctx {
    int cell, color;
    int calls;
} forbid_ctx;

static bool forbid_one(void *ctx, const uint8_t *board, int cell, int color)
{
    forbid_ctx *f = ctx;
    (void)board;
    f->calls++;
    return cell == f->cell && color == f->color;
}

static bool forbid_all(void *ctx, const uint8_t *board, int cell, int color)
{
    (void)board;
    return color == *(int *)ctx && cell >= 0;
}

/* A forbidden point is no attack and no defence for that colour. */
START_TEST(forbidden_points)
{
    const tcase *tc = NULL;
    for (size_t i = 0; i < sizeof vcf_cases / sizeof vcf_cases[0] && !tc; i++)
        if (vcf_cases[i].win && vcf_cases[i].min_moves >= 3)
            tc = &vcf_cases[i];
    bf_board x;
    load_case(tc, false, &x);
    threat_solver *t = new_solver(&x);
    int pv[PVMAX], len;
    ck_assert_int_eq(solve(t, &x, 1, THREAT_VCF, 200000, pv, &len), THREAT_WIN);
    /* every point forbidden for the attacker: no attack at all */
    int black = 1;
    threat_set_forbidden(t, forbid_all, &black);
    ck_assert_int_eq(solve(t, &x, 1, THREAT_VCF, 200000, pv, &len), THREAT_NONE);
    /* the first forced block forbidden for the defender: the first four wins at once */
    int block = pv[1];
    forbid_ctx f = {block, 2, 0};
    threat_set_forbidden(t, forbid_one, &f);
    threat_set_forbidden(t, NULL, NULL);
    ck_assert_int_eq(solve(t, &x, 1, THREAT_VCF, 200000, pv, &len), THREAT_WIN);
    int first = pv[0];
    block = pv[1];
    f.cell = block;
    threat_set_forbidden(t, forbid_one, &f);
    ck_assert_int_eq(solve(t, &x, 1, THREAT_VCF, 200000, pv, &len), THREAT_WIN);
    ck_assert_int_gt(f.calls, 0);
    ck_assert_int_eq(pv[0], first);
    ck_assert_int_eq(len, 3);
    ck_assert_int_ne(pv[1], block);
    ck_assert_int_eq(pv[2], block);
    threat_free(t);
}
END_TEST

static game *make_game(int size, int k, bool exact, const char *name)
{
    gz_config c;
    cfg_defaults(&c, name);
    if (strcmp(name, "mnk") == 0) {
        c.game.rows = c.game.cols = size;
        c.game.k = k;
        cfg_game_set_rule(&c.game, exact ? CFG_RULE_EXACT : CFG_RULE_FREESTYLE);
    }
    char err[256];
    game *g = game_new(&c.game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    return g;
}

/* The game hooks: threat_win for the player to move, threat_defend for the other. */
START_TEST(mnk_hooks)
{
    const tcase *tc = NULL;
    for (size_t i = 0; i < sizeof vcf_cases / sizeof vcf_cases[0] && !tc; i++)
        if (vcf_cases[i].win && vcf_cases[i].min_moves >= 4 && !vcf_cases[i].exact)
            tc = &vcf_cases[i];
    bf_board x;
    load_case(tc, false, &x);
    game *g = make_game(x.rows, 5, false, "mnk");
    ck_assert(g->ops->threat_new && g->ops->threat_free && g->ops->threat_win && g->ops->threat_defend);
    char err[256];
    void *ws = g->ops->threat_new(g, 14, err, sizeof err);
    ck_assert_msg(ws != NULL, "%s", err);
    /* set the diagram up by playing X and O stones alternately (equal counts: X moves) */
    game_state *s = game_state_new(g, NULL);
    int xs[MAXN], os[MAXN], nx = 0, no = 0;
    for (int c = 0; c < x.rows * x.cols; c++) {
        if (x.b[c] == 1)
            xs[nx++] = c;
        if (x.b[c] == 2)
            os[no++] = c;
    }
    ck_assert_int_eq(nx, no);
    for (int i = 0; i < nx; i++) {
        ck_assert_int_eq(game_play(g, s, xs[i]), 0);
        ck_assert_int_eq(game_play(g, s, os[i]), 0);
    }
    int pv[PVMAX];
    int len = g->ops->threat_win(g, s, ws, 0, 200000, 0, pv, PVMAX);
    ck_assert_int_gt(len, 0);
    check_line(tc->name, &x, 1, THREAT_VCF, pv, len);
    ck_assert_int_eq(g->ops->threat_win(g, s, ws, 0, 0, 0, pv, PVMAX), 0);
    ck_assert_int_eq(g->ops->threat_win(g, s, ws, 2, 200000, 0, pv, PVMAX), 0); /* no player 2 */
    /* playing the line wins the game */
    game_state *s2 = game_state_new(g, NULL);
    game_copy(g, s2, s);
    for (int i = 0; i < len; i++)
        ck_assert_int_eq(game_play(g, s2, pv[i]), 0);
    ck_assert(game_terminal(g, s2));
    float z[2];
    game_result(g, s2, z);
    ck_assert_float_eq(z[0], 1.0f);
    /* after a quiet X move far away, O to move must defend */
    int quiet = -1;
    for (int c = 0; c < x.rows * x.cols && quiet < 0; c++)
        if (!x.b[c] && (c % x.cols == 0 || c < x.cols))
            quiet = c;
    game_copy(g, s2, s);
    ck_assert_int_eq(game_play(g, s2, quiet), 0);
    /* O to move: X's VCF is still found for X moving first */
    int pv2[PVMAX];
    ck_assert_int_gt(g->ops->threat_win(g, s2, ws, 0, 200000, 0, pv2, PVMAX), 0);
    uint8_t mask[MAXN];
    /* O has no VCF of his own here; X's VCF must be answered */
    int n = g->ops->threat_defend(g, s2, ws, 200000, mask);
    ck_assert_int_gt(n, 0);
    int cnt = 0;
    for (int c = 0; c < g->actions; c++)
        cnt += mask[c];
    ck_assert_int_eq(cnt, n);
    free(s2);
    free(s);
    g->ops->threat_free(ws);
    game_free(g);

    /* tic-tac-toe has no threat search; sanling has no hooks */
    g = make_game(3, 3, false, "mnk");
    ck_assert(g->ops->threat_new(g, 14, err, sizeof err) == NULL);
    ck_assert_msg(strstr(err, "k = 3"), "%s", err);
    game_free(g);
    g = make_game(0, 0, false, "sanling");
    ck_assert(g->ops->threat_new == NULL && g->ops->threat_win == NULL);
    game_free(g);
}
END_TEST

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Prints the solver's speed (nodes/s over all VCF cases, a fresh table each round). */
START_TEST(speed)
{
    long nodes = 0;
    double t0 = now_seconds();
    int rounds = 0;
    while (now_seconds() - t0 < 1.0) {
        for (size_t i = 0; i < sizeof vcf_cases / sizeof vcf_cases[0]; i++) {
            bf_board x;
            load_case(&vcf_cases[i], false, &x);
            threat_solver *t = new_solver(&x);
            int pv[PVMAX], len;
            for (int kind = 0; kind < 2; kind++) {
                solve(t, &x, 1, (threat_kind)kind, 2000000, pv, &len);
                nodes += threat_nodes(t);
            }
            threat_free(t);
        }
        rounds++;
    }
    double dt = now_seconds() - t0;
    fprintf(stderr, "threat: %ld nodes in %.2f s (%d rounds of %d positions, VCF + VCT): %.0f nodes/s "
                    "(including table set-up per position)\n",
            nodes, dt, rounds, (int)(sizeof vcf_cases / sizeof vcf_cases[0]), (double)nodes / dt);
    ck_assert_int_gt(nodes, 0);
}
END_TEST

static Suite *threat_suite(void)
{
    Suite *s = suite_create("threat");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, vcf_positions);
    tcase_add_test(tc, vcf_lengths_match_brute_force);
    tcase_add_test(tc, vcf_agrees_with_brute_force_on_random_positions);
    tcase_add_test(tc, small_table_still_gives_lines);
    tcase_add_test(tc, vct_positions);
    tcase_add_test(tc, bad_input_is_refused);
    tcase_add_test(tc, budget_runs_out);
    tcase_add_test(tc, defences_stop_the_vcf);
    tcase_add_test(tc, forbidden_points);
    tcase_add_test(tc, mnk_hooks);
    tcase_add_test(tc, speed);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(threat_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
