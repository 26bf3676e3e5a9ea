/**
 * Word lists the databases draw their records from, written for this project: plain ASCII, no
 * apostrophes. Single words are stored as space-separated text, longer names comma-separated,
 * to keep the module small.
 */

const words = (text: string): readonly string[] => text.split(/\s+/);
const items = (text: string): readonly string[] => text.split(/\s*,\s*/);

export const FIRST_NAMES = words(
  "Ada Alan Alice Amara Ana Andre Anna Arjun Ben Bianca Carla Carlos Chen Clara Daniel Diego " +
    "Elena Emil Emma Eva Farah Felix Fiona Grace Hana Hugo Ines Isaac Ivan Jade James Julia Kai " +
    "Karim Laura Leo Lina Luca Maya Marco Maria Mateo Mia Nadia Nina Noah Omar Olga Paula Pedro " +
    "Priya Rosa Ruben Sara Sofia Tariq Tessa Theo Uma Victor Vera Yara Yusuf Zoe",
);

export const LAST_NAMES = words(
  "Almeida Baker Berg Novak Costa Dubois Eriksen Fischer Garcia Gomez Hansen Herrera Ito Jansen " +
    "Kaur Keller Kowalski Larsen Lopez Martin Meyer Moreau Nakamura Nguyen Nowak Okafor Olsen " +
    "Patel Perez Petrov Quinn Ramos Rossi Santos Schmidt Silva Singh Sousa Tanaka Torres Varga " +
    "Vogel Walsh Weber Wong Yilmaz Zhang Ziegler Bauer Conti Duarte Ferrari Haddad Ivanova Klein " +
    "Lindqvist Mendes Moretti Pires Reyes Sato Svensson Tavares Ward",
);

/** European cities used for customers, members and office locations. */
export const CITIES = words(
  "Lisbon Porto Madrid Valencia Lyon Paris Milan Turin Berlin Hamburg Vienna Prague",
);

export const COUNTRIES = words(
  "Portugal Spain France Italy Germany Austria Ireland Greece Poland Norway",
);

/** Shop products per category, with the price range (dollars) a category's products lie in. */
export const SHOP_CATEGORIES: ReadonlyArray<{
  category: string;
  low: number;
  high: number;
  products: readonly string[];
}> = [
  {
    category: "electronics",
    low: 8,
    high: 260,
    products: items(
      "USB-C Cable, Wireless Mouse, Mechanical Keyboard, Noise-Cancelling Headphones, Webcam, " +
        "Portable Charger, Bluetooth Speaker",
    ),
  },
  {
    category: "kitchen",
    low: 6,
    high: 180,
    products: items(
      "Chef Knife, Cast Iron Pan, Coffee Grinder, Electric Kettle, Cutting Board, Blender, " +
        "Spice Rack",
    ),
  },
  {
    category: "books",
    low: 7,
    high: 48,
    products: items(
      "Vegetarian Cookbook, Travel Guide, Mystery Novel, Poetry Collection, Science Atlas, " +
        "Graphic Novel, History of Art",
    ),
  },
  {
    category: "garden",
    low: 4,
    high: 95,
    products: items(
      "Garden Hose, Pruning Shears, Flower Seeds, Watering Can, Bird Feeder, Compost Bin, " +
        "Garden Gloves",
    ),
  },
  {
    category: "toys",
    low: 3,
    high: 75,
    products: items(
      "Puzzle Box, Wooden Train, Kite, Board Game, Building Blocks, Plush Bear, Yo-Yo",
    ),
  },
  {
    category: "sports",
    low: 5,
    high: 150,
    products: items(
      "Yoga Mat, Tennis Racket, Football, Jump Rope, Water Bottle, Cycling Helmet, Dumbbell Set",
    ),
  },
];

/** School departments and the courses each offers. */
export const SCHOOL_DEPARTMENTS: ReadonlyArray<{ department: string; courses: readonly string[] }> =
  [
    { department: "Biology", courses: items("Cell Biology, Genetics, Ecology, Microbiology") },
    {
      department: "Chemistry",
      courses: items("General Chemistry, Organic Chemistry, Biochemistry, Physical Chemistry"),
    },
    {
      department: "Computer Science",
      courses: items("Programming I, Data Structures, Databases, Operating Systems"),
    },
    {
      department: "Economics",
      courses: items("Microeconomics, Macroeconomics, Econometrics, Game Theory"),
    },
    {
      department: "History",
      courses: items("Ancient History, Medieval Europe, Modern History, History of Science"),
    },
    {
      department: "Mathematics",
      courses: items("Calculus I, Linear Algebra, Probability, Number Theory"),
    },
  ];

export const MAJORS = items(
  "Biology, Chemistry, Computer Science, Economics, History, Mathematics, Physics, Psychology",
);

export const BOOK_GENRES = items(
  "fantasy, mystery, romance, science fiction, biography, history, poetry, thriller",
);

export const TITLE_ADJECTIVES = words(
  "Silent Hidden Golden Broken Distant Burning Frozen Forgotten Secret Crimson Endless Quiet " +
    "Wild Last Lonely Velvet Iron Paper Summer Winter",
);

export const TITLE_NOUNS = words(
  "River Garden Kingdom Letter Harbor Mountain Forest Mirror Island Lantern Voyage Orchard " +
    "Tower Shadow Compass Bridge Storm Promise Station Map",
);

/** Airports: IATA code, city and country. */
export const AIRPORTS: ReadonlyArray<readonly [string, string, string]> = [
  ["LIS", "Lisbon", "Portugal"],
  ["OPO", "Porto", "Portugal"],
  ["MAD", "Madrid", "Spain"],
  ["BCN", "Barcelona", "Spain"],
  ["CDG", "Paris", "France"],
  ["LYS", "Lyon", "France"],
  ["FCO", "Rome", "Italy"],
  ["MXP", "Milan", "Italy"],
  ["BER", "Berlin", "Germany"],
  ["MUC", "Munich", "Germany"],
  ["AMS", "Amsterdam", "Netherlands"],
  ["VIE", "Vienna", "Austria"],
  ["DUB", "Dublin", "Ireland"],
  ["ATH", "Athens", "Greece"],
];

/** Airlines: name, flight number prefix and home country. */
export const AIRLINES: ReadonlyArray<readonly [string, string, string]> = [
  ["Aurora Airways", "AU", "Portugal"],
  ["Iberwing", "IW", "Spain"],
  ["Skyline France", "SF", "France"],
  ["Tricolore Air", "TC", "Italy"],
  ["Alpina Air", "AL", "Austria"],
  ["Emerald Jet", "EJ", "Ireland"],
  ["Aegean Star", "AS", "Greece"],
];

/** Company departments and the job titles in each, with each title's salary band. */
export const HR_DEPARTMENTS: ReadonlyArray<{
  name: string;
  titles: ReadonlyArray<readonly [string, number, number]>;
}> = [
  {
    name: "Engineering",
    titles: [
      ["Software Engineer", 62000, 98000],
      ["Senior Engineer", 95000, 135000],
    ],
  },
  {
    name: "Sales",
    titles: [
      ["Account Executive", 48000, 82000],
      ["Sales Representative", 36000, 56000],
    ],
  },
  {
    name: "Marketing",
    titles: [
      ["Marketing Specialist", 44000, 70000],
      ["Content Writer", 38000, 60000],
    ],
  },
  {
    name: "Finance",
    titles: [
      ["Accountant", 50000, 78000],
      ["Financial Analyst", 60000, 92000],
    ],
  },
  {
    name: "Human Resources",
    titles: [
      ["Recruiter", 42000, 64000],
      ["HR Specialist", 45000, 68000],
    ],
  },
  {
    name: "Support",
    titles: [
      ["Support Agent", 32000, 48000],
      ["Support Engineer", 46000, 72000],
    ],
  },
  {
    name: "Research",
    titles: [
      ["Research Scientist", 70000, 120000],
      ["Lab Technician", 38000, 58000],
    ],
  },
  {
    name: "Operations",
    titles: [
      ["Operations Analyst", 50000, 76000],
      ["Logistics Coordinator", 40000, 62000],
    ],
  },
];

export const PROJECT_CODENAMES = words(
  "Falcon Aurora Beacon Cascade Delta Ember Fjord Granite Harbor Horizon Juniper Keystone " +
    "Lighthouse Meridian Nimbus Orion Pioneer Quartz Redwood Summit Tempest Unity Vanguard " +
    "Willow Zephyr Atlas Bluebird Comet Dynamo Evergreen",
);
