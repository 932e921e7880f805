"""The tool library of ``tool/FunctionCalling-v0``: 43 everyday tools, each a
typed Python signature with a docstring (turned into an OpenAI schema by the
core's :func:`gym_llm.envs.tools.function_schema`), plus the request templates and
value pools that generate user requests for it.

The functions are *declarations*: FunctionCalling scores the call the model
writes and never runs a tool, so each body is only its docstring.

A :class:`Case` draws one request: a template (the first is the plainest and
names one or two arguments), values for its ``{placeholders}`` from the pools,
and the gold arguments (exactly the placeholders the template names; the other
parameters keep their defaults). Pools are a list of strings (value = text), a
mapping ``value -> text``, or a function ``rng -> (value, text)``; a key that is
a tuple of names draws those values jointly (``rng -> ((v1, t1), (v2, t2))``),
for pairs that must differ or be ordered (currencies, hotel dates).
"""

from __future__ import annotations

import datetime
import json
import random
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from gym_llm.envs.tools import function_schema

__all__ = ["Case", "CASES", "schema_of"]

Pool = Sequence[str] | Mapping[Any, str] | Callable[[random.Random], Any]
Temp = Literal["celsius", "fahrenheit"]
Room = Literal["kitchen", "living room", "bedroom", "bathroom", "office"]


# --------------------------------------------------------------- weather, time
def get_weather(city: str, unit: Temp = "celsius"):
    """Current weather conditions in a city.

    Args:
        city: City name, e.g. "Paris".
        unit: Temperature unit.
    """


def get_forecast(city: str, days: int = 3):
    """Weather forecast for the coming days.

    Args:
        city: City name.
        days: Number of days to forecast (1-14).
    """


def get_local_time(city: str):
    """Current local time in a city.

    Args:
        city: City name.
    """


# ----------------------------------------------------- calendar and reminders
def create_calendar_event(title: str, date: str, time: str, duration_minutes: int = 60):
    """Add an event to the user's calendar.

    Args:
        title: Event title.
        date: Date as YYYY-MM-DD.
        time: Start time as HH:MM (24-hour).
        duration_minutes: Length of the event in minutes.
    """


def list_calendar_events(date: str):
    """List the events on the user's calendar for one day.

    Args:
        date: Date as YYYY-MM-DD.
    """


def set_alarm(time: str, label: str = "Alarm"):
    """Set an alarm on the user's phone.

    Args:
        time: Time as HH:MM (24-hour).
        label: Name shown when the alarm rings.
    """


def set_timer(minutes: int):
    """Start a countdown timer.

    Args:
        minutes: Length of the timer in minutes.
    """


def create_reminder(text: str, date: str, time: str = "09:00"):
    """Create a reminder.

    Args:
        text: What to be reminded of.
        date: Date as YYYY-MM-DD.
        time: Time as HH:MM (24-hour).
    """


# ------------------------------------------------------------ communication
def send_email(to: str, subject: str, body: str):
    """Send an email.

    Args:
        to: Recipient email address.
        subject: Subject line.
        body: Message text.
    """


def send_text_message(phone_number: str, message: str):
    """Send an SMS text message.

    Args:
        phone_number: Recipient phone number.
        message: Message text.
    """


def call_contact(name: str):
    """Start a phone call with a contact from the address book.

    Args:
        name: The contact's name.
    """


# ------------------------------------------------------------ media and home
def play_music(artist: str, shuffle: bool = False):
    """Play music by an artist.

    Args:
        artist: Artist or band name.
        shuffle: Play in random order.
    """


def set_volume(level: int):
    """Set the speaker volume.

    Args:
        level: Volume in percent (0-100).
    """


def set_thermostat(temperature: float, unit: Temp = "celsius"):
    """Set the home thermostat's target temperature.

    Args:
        temperature: Target temperature.
        unit: Temperature unit.
    """


def turn_on_lights(room: Room, brightness: int = 100):
    """Turn on the lights in a room.

    Args:
        room: The room.
        brightness: Brightness in percent (1-100).
    """


def turn_off_lights(room: Room):
    """Turn off the lights in a room.

    Args:
        room: The room.
    """


def lock_door(door: Literal["front", "back", "garage"]):
    """Lock a door of the house.

    Args:
        door: Which door.
    """


# ---------------------------------------------------------- shopping, food
def add_to_shopping_list(item: str, quantity: int = 1):
    """Add an item to the shopping list.

    Args:
        item: What to buy.
        quantity: How many.
    """


def search_products(query: str, max_price: float | None = None):
    """Search the online store.

    Args:
        query: What to search for.
        max_price: Highest price in US dollars.
    """


def track_package(tracking_number: str):
    """Where a parcel is now.

    Args:
        tracking_number: The carrier's tracking number.
    """


def find_restaurants(city: str, cuisine: str):
    """Find restaurants by cuisine.

    Args:
        city: City name.
        cuisine: Type of food, e.g. "thai".
    """


def book_table(restaurant: str, date: str, time: str, party_size: int):
    """Reserve a table at a restaurant.

    Args:
        restaurant: Restaurant name.
        date: Date as YYYY-MM-DD.
        time: Time as HH:MM (24-hour).
        party_size: Number of guests.
    """


def order_food(restaurant: str, items: list[str]):
    """Order food for delivery.

    Args:
        restaurant: Restaurant name.
        items: Dishes to order.
    """


# ----------------------------------------------------------------- travel
def search_flights(origin: str, destination: str, date: str):
    """Search flights between two cities.

    Args:
        origin: Departure city.
        destination: Arrival city.
        date: Departure date as YYYY-MM-DD.
    """


def book_hotel(city: str, check_in: str, check_out: str, guests: int = 1):
    """Book a hotel room.

    Args:
        city: City name.
        check_in: Arrival date as YYYY-MM-DD.
        check_out: Departure date as YYYY-MM-DD.
        guests: Number of guests.
    """


def get_directions(origin: str, destination: str,
                   mode: Literal["driving", "walking", "transit", "cycling"] = "driving"):
    """Route between two places.

    Args:
        origin: Start address or place.
        destination: End address or place.
        mode: How to travel.
    """


def request_ride(pickup: str, destination: str,
                 ride_type: Literal["standard", "xl", "luxury"] = "standard"):
    """Order a taxi ride.

    Args:
        pickup: Pickup address or place.
        destination: Drop-off address or place.
        ride_type: Vehicle class.
    """


# ----------------------------------------------------------------- money
def convert_currency(amount: float, from_currency: str, to_currency: str):
    """Convert an amount between currencies.

    Args:
        amount: Amount of money.
        from_currency: ISO code of the source currency, e.g. "USD".
        to_currency: ISO code of the target currency.
    """


def get_stock_price(symbol: str):
    """Latest price of a stock.

    Args:
        symbol: Ticker symbol, e.g. "AAPL".
    """


def transfer_money(to_account: str, amount: float, currency: Literal["USD", "EUR", "GBP"] = "USD"):
    """Transfer money to another bank account.

    Args:
        to_account: Recipient account number.
        amount: Amount to send.
        currency: Currency of the amount.
    """


def check_balance(account: Literal["checking", "savings"]):
    """Balance of one of the user's bank accounts.

    Args:
        account: Which account.
    """


def calculate_tip(bill_amount: float, tip_percent: float = 15):
    """Tip for a restaurant bill.

    Args:
        bill_amount: The bill in US dollars.
        tip_percent: Tip in percent of the bill.
    """


# ------------------------------------------------------------- knowledge
def translate_text(text: str, target_language: str):
    """Translate text.

    Args:
        text: Text to translate.
        target_language: Language to translate into, e.g. "French".
    """


def define_word(word: str):
    """Dictionary definition of an English word.

    Args:
        word: The word.
    """


def search_web(query: str):
    """Search the web.

    Args:
        query: Search query.
    """


def get_news(topic: str, count: int = 5):
    """Latest news headlines on a topic.

    Args:
        topic: News topic.
        count: Number of headlines.
    """


def convert_units(value: float, from_unit: str, to_unit: str):
    """Convert a measurement between units.

    Args:
        value: The number to convert.
        from_unit: Unit of the value, e.g. "km".
        to_unit: Unit to convert to.
    """


# ------------------------------------------------------ health, productivity
def log_workout(activity: Literal["running", "cycling", "swimming", "yoga", "walking"],
                duration_minutes: int):
    """Record a workout in the fitness log.

    Args:
        activity: Kind of exercise.
        duration_minutes: Duration in minutes.
    """


def log_water_intake(milliliters: int):
    """Record water the user drank.

    Args:
        milliliters: Amount in millilitres.
    """


def create_note(title: str, content: str):
    """Create a note.

    Args:
        title: Note title.
        content: Note text.
    """


def add_todo(task: str, due_date: str | None = None):
    """Add a task to the to-do list.

    Args:
        task: What needs doing.
        due_date: Due date as YYYY-MM-DD.
    """


def set_out_of_office(start_date: str, end_date: str, message: str):
    """Turn on the email auto-reply while away.

    Args:
        start_date: First day away, YYYY-MM-DD.
        end_date: Last day away, YYYY-MM-DD.
        message: Auto-reply text.
    """


def share_location(contact: str, minutes: int = 60):
    """Share the user's live location with a contact.

    Args:
        contact: The contact's name.
        minutes: How long to share, in minutes.
    """


# ------------------------------------------------------------------ pools
CITIES = ["Paris", "Tokyo", "Lagos", "Lima", "Oslo", "Cairo", "Denver", "Madrid", "Seoul",
          "Nairobi", "Toronto", "Sydney", "Mumbai", "Berlin", "Chicago", "Lisbon", "Hanoi",
          "Istanbul", "Dublin", "Boston", "Quito", "Vienna", "Prague", "Manila"]
NAMES = ["Alice", "Bob", "Carmen", "Deepak", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jamal",
         "Kofi", "Lena", "Mateo", "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tariq"]
ARTISTS = ["Queen", "Adele", "Miles Davis", "Taylor Swift", "Radiohead", "Fela Kuti",
           "Beyonce", "Bach", "Nirvana", "Shakira", "Daft Punk", "Bob Marley"]
PLACES = ["the airport", "the train station", "City Hall", "the museum", "the stadium",
          "Central Park", "the university", "the harbour", "Main Street Mall", "the hospital"]
ROOMS = ["kitchen", "living room", "bedroom", "bathroom", "office"]
TASKS = ["call the dentist", "water the plants", "pay the rent", "renew my passport",
         "buy a birthday gift", "book a haircut", "return the library books", "back up my laptop"]
TITLES = ["Team standup", "Dentist appointment", "Lunch with Sam", "Project review",
          "Yoga class", "Parent-teacher meeting", "Budget planning", "Book club"]
SUBJECTS = ["Meeting notes", "Invoice 2291", "Weekend plans", "Quarterly report", "Flight details"]
BODIES = ["See you at noon", "Please find the numbers attached", "Running ten minutes late",
          "Thanks for your help", "The meeting moved to Friday"]
TEXTS = ["Good morning", "Where is the station", "Thank you very much", "How much does it cost",
         "I would like a coffee", "The meeting is tomorrow"]
LANGUAGES = ["French", "Spanish", "German", "Japanese", "Swahili", "Portuguese", "Korean", "Italian"]
WORDS = ["ephemeral", "ubiquitous", "serendipity", "laconic", "quixotic", "mellifluous", "gregarious"]
TOPICS = ["climate", "football", "elections", "space exploration", "technology", "the economy"]
QUERIES = ["best hiking boots", "how to bake sourdough", "cheap flights to Rome",
           "symptoms of the flu", "history of jazz", "how tall is Mount Kenya"]
PRODUCTS = ["wireless headphones", "running shoes", "a coffee grinder", "a desk lamp",
            "a yoga mat", "a backpack", "a phone charger", "a water bottle"]
GROCERIES = ["eggs", "bananas", "apples", "onions", "lemons", "bagels", "tomatoes", "yogurts"]
CUISINES = ["thai", "italian", "mexican", "ethiopian", "japanese", "indian", "lebanese"]
RESTAURANTS = ["Luigi's", "Golden Dragon", "Taqueria Sol", "Blue Lotus", "The Green Fork",
               "Casa Mia", "Spice Route"]
DISHES = ["margherita pizza", "caesar salad", "pad thai", "chicken curry", "veggie burger",
          "miso soup", "beef tacos", "falafel wrap", "garlic bread"]
SYMBOLS = ["AAPL", "MSFT", "TSLA", "NVDA", "AMZN", "GOOGL", "KO", "SAP"]
CURRENCIES = ["USD", "EUR", "GBP", "JPY", "INR", "NGN", "BRL", "CAD"]
UNIT_PAIRS = [("km", "miles"), ("miles", "km"), ("kg", "pounds"), ("pounds", "kg"),
              ("liters", "gallons"), ("inches", "cm"), ("feet", "meters")]
OOO_MESSAGES = ["I am on vacation", "Away at a conference", "Out of office, back soon"]
TEMP_UNITS = {"celsius": "Celsius", "fahrenheit": "Fahrenheit"}

_BASE_DATE = datetime.date(2025, 1, 1)


def _ints(lo: int, hi: int, step: int = 1) -> Callable[[random.Random], tuple[int, str]]:
    def draw(rng: random.Random) -> tuple[int, str]:
        v = rng.randrange(lo, hi + 1, step)
        return v, str(v)
    return draw


def _money(lo: int, hi: int) -> Callable[[random.Random], tuple[float, str]]:
    def draw(rng: random.Random) -> tuple[float, str]:
        cents = rng.randrange(lo * 100, hi * 100 + 1, 5)
        return cents / 100, f"{cents / 100:.2f}"
    return draw


def _date(rng: random.Random) -> tuple[str, str]:
    d = (_BASE_DATE + datetime.timedelta(days=rng.randrange(365))).isoformat()
    return d, d


def _date_range(rng: random.Random) -> tuple[tuple[str, str], tuple[str, str]]:
    start = _BASE_DATE + datetime.timedelta(days=rng.randrange(360))
    end = (start + datetime.timedelta(days=rng.randrange(1, 10))).isoformat()
    return (start.isoformat(), start.isoformat()), (end, end)


def _time(rng: random.Random) -> tuple[str, str]:
    t = f"{rng.randrange(6, 23):02d}:{rng.choice([0, 15, 30, 45]):02d}"
    return t, t


def _phone(rng: random.Random) -> tuple[str, str]:
    p = f"+1-555-{rng.randrange(100, 1000)}-{rng.randrange(1000, 10000)}"
    return p, p


def _email(rng: random.Random) -> tuple[str, str]:
    e = f"{rng.choice(NAMES).lower()}@example.com"
    return e, e


def _tracking(rng: random.Random) -> tuple[str, str]:
    t = "1Z" + "".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(10))
    return t, t


def _account(rng: random.Random) -> tuple[str, str]:
    a = "".join(rng.choice(string.digits) for _ in range(10))
    return a, a


def _two_of(options: Sequence[str]) -> Callable[[random.Random], tuple[tuple[str, str], tuple[str, str]]]:
    def draw(rng: random.Random) -> tuple[tuple[str, str], tuple[str, str]]:
        a, b = rng.sample(list(options), 2)
        return (a, a), (b, b)
    return draw


def _unit_pair(rng: random.Random) -> tuple[tuple[str, str], tuple[str, str]]:
    a, b = rng.choice(UNIT_PAIRS)
    return (a, a), (b, b)


def _dishes(rng: random.Random) -> tuple[list[str], str]:
    dishes = rng.sample(DISHES, rng.randrange(1, 4))
    text = dishes[0] if len(dishes) == 1 else ", ".join(dishes[:-1]) + " and " + dishes[-1]
    return dishes, text


# ------------------------------------------------------------------ cases
@dataclass(frozen=True, eq=False)
class Case:
    """One tool and how to ask for it. ``templates[0]`` is the plainest
    request; ``domain`` groups look-alike tools (hard distractors)."""

    fn: Callable[..., Any]
    domain: str
    templates: tuple[str, ...]
    pools: Mapping[str | tuple[str, ...], Pool]

    @property
    def name(self) -> str:
        return self.fn.__name__

    def draw(self, rng: random.Random, template: int) -> tuple[str, dict[str, Any]]:
        """``(request text, gold arguments)`` for ``templates[template]``."""
        text = self.templates[template]
        values: dict[str, Any] = {}
        surface: dict[str, str] = {}
        for key, pool in self.pools.items():
            names = key if isinstance(key, tuple) else (key,)
            if not any("{" + n + "}" in text for n in names):
                continue
            drawn = _draw(pool, rng)
            for n, (value, shown) in zip(names, drawn if isinstance(key, tuple) else [drawn], strict=True):
                if "{" + n + "}" in text:
                    values[n], surface[n] = value, shown
        return text.format(**surface), values


def _draw(pool: Pool, rng: random.Random) -> Any:
    if callable(pool):
        return pool(rng)
    if isinstance(pool, Mapping):
        value = rng.choice(sorted(pool, key=str))
        return value, pool[value]
    value = rng.choice(list(pool))
    return value, value


CASES: tuple[Case, ...] = (
    Case(get_weather, "weather",
         ("What's the weather in {city} right now?", "How warm is it in {city} at the moment, in {unit}?",
          "I'm heading out in {city} - current conditions in {unit}, please."),
         {"city": CITIES, "unit": TEMP_UNITS}),
    Case(get_forecast, "weather",
         ("What's the weather forecast for {city}?", "Give me the {days}-day forecast for {city}.",
          "Will I need an umbrella in {city} over the next {days} days? Check the forecast."),
         {"city": CITIES, "days": _ints(2, 10)}),
    Case(get_local_time, "weather", ("What time is it in {city}?", "Is it late in {city} now? Tell me the local time."),
         {"city": CITIES}),
    Case(create_calendar_event, "calendar",
         ('Put "{title}" on my calendar on {date} at {time}.',
          'Schedule "{title}" for {date} at {time}, lasting {duration_minutes} minutes.'),
         {"title": TITLES, "date": _date, "time": _time, "duration_minutes": _ints(15, 180, 15)}),
    Case(list_calendar_events, "calendar", ("What's on my calendar on {date}?", "Am I free on {date}? Show my events."),
         {"date": _date}),
    Case(set_alarm, "calendar", ("Set an alarm for {time}.", 'Wake me at {time} with an alarm called "{label}".'),
         {"time": _time, "label": ["Gym", "Meds", "Flight", "School run"]}),
    Case(set_timer, "calendar", ("Set a timer for {minutes} minutes.", "Start a {minutes}-minute countdown."),
         {"minutes": _ints(1, 90)}),
    Case(create_reminder, "calendar",
         ("Remind me to {text} on {date}.", "On {date} at {time}, remind me to {text}."),
         {"text": TASKS, "date": _date, "time": _time}),
    Case(send_email, "communication",
         ('Email {to} with the subject "{subject}" and the text "{body}".',),
         {"to": _email, "subject": SUBJECTS, "body": BODIES}),
    Case(send_text_message, "communication",
         ('Text {phone_number}: "{message}"', 'Send an SMS to {phone_number} that says "{message}".'),
         {"phone_number": _phone, "message": BODIES}),
    Case(call_contact, "communication", ("Call {name}.", "Could you ring {name} for me?"), {"name": NAMES}),
    Case(share_location, "communication",
         ("Share my location with {contact}.", "Let {contact} see where I am for the next {minutes} minutes."),
         {"contact": NAMES, "minutes": _ints(15, 240, 15)}),
    Case(play_music, "media", ("Play some music by {artist}.", "Put on {artist} {shuffle}."),
         {"artist": ARTISTS, "shuffle": {True: "on shuffle"}}),
    Case(set_volume, "media", ("Set the volume to {level} percent.", "Turn the speaker to {level}% volume."),
         {"level": _ints(0, 100, 5)}),
    Case(set_thermostat, "home",
         ("Set the thermostat to {temperature} degrees.", "Make it {temperature} degrees {unit} in the house."),
         {"temperature": _ints(16, 26), "unit": TEMP_UNITS}),
    Case(turn_on_lights, "home",
         ("Turn on the lights in the {room}.", "Switch the {room} lights on at {brightness}% brightness."),
         {"room": ROOMS, "brightness": _ints(10, 90, 10)}),
    Case(turn_off_lights, "home", ("Turn off the lights in the {room}.", "Kill the {room} lights, please."),
         {"room": ROOMS}),
    Case(lock_door, "home", ("Lock the {door} door.", "Did I leave the {door} door open? Lock it."),
         {"door": ["front", "back", "garage"]}),
    Case(add_to_shopping_list, "shopping",
         ("Add {item} to my shopping list.", "Put {quantity} {item} on the shopping list."),
         {"item": GROCERIES, "quantity": _ints(2, 12)}),
    Case(search_products, "shopping",
         ("Search the store for {query}.", "Find me {query} for at most {max_price} dollars."),
         {"query": PRODUCTS, "max_price": _money(10, 300)}),
    Case(track_package, "shopping", ("Where is my package {tracking_number}?",), {"tracking_number": _tracking}),
    Case(find_restaurants, "food", ("Find {cuisine} restaurants in {city}.", "Where can I eat {cuisine} food in {city}?"),
         {"cuisine": CUISINES, "city": CITIES}),
    Case(book_table, "food",
         ("Book a table for {party_size} at {restaurant} on {date} at {time}.",),
         {"party_size": _ints(1, 10), "restaurant": RESTAURANTS, "date": _date, "time": _time}),
    Case(order_food, "food", ("Order {items} from {restaurant}.", "I'm hungry: get me {items} from {restaurant}."),
         {"items": _dishes, "restaurant": RESTAURANTS}),
    Case(search_flights, "travel",
         ("Find flights from {origin} to {destination} on {date}.",
          "I need to fly {origin} to {destination}, leaving {date}. What's available?"),
         {("origin", "destination"): _two_of(CITIES), "date": _date}),
    Case(book_hotel, "travel",
         ("Book a hotel in {city} from {check_in} to {check_out}.",
          "Reserve a hotel room in {city} for {guests} guests, checking in {check_in} and out {check_out}."),
         {"city": CITIES, ("check_in", "check_out"): _date_range, "guests": _ints(2, 5)}),
    Case(get_directions, "travel",
         ("How do I get from {origin} to {destination}?", "Give me {mode} directions from {origin} to {destination}."),
         {("origin", "destination"): _two_of(PLACES), "mode": ["walking", "transit", "cycling"]}),
    Case(request_ride, "travel",
         ("Get me a ride from {pickup} to {destination}.", "I want the {ride_type} option for a ride from {pickup} to {destination}."),
         {("pickup", "destination"): _two_of(PLACES), "ride_type": {"xl": "XL", "luxury": "luxury"}}),
    Case(convert_currency, "money",
         ("Convert {amount} {from_currency} to {to_currency}.",
          "How many {to_currency} would I get for {amount} {from_currency}?"),
         {"amount": _money(1, 5000), ("from_currency", "to_currency"): _two_of(CURRENCIES)}),
    Case(get_stock_price, "money", ("What's the stock price of {symbol}?", "How is {symbol} trading right now?"),
         {"symbol": SYMBOLS}),
    Case(transfer_money, "money",
         ("Send {amount} dollars to account {to_account}.", "Transfer {amount} {currency} to account {to_account}."),
         {"amount": _money(5, 2000), "to_account": _account, "currency": ["EUR", "GBP"]}),
    Case(check_balance, "money", ("What's the balance of my {account} account?", "How much is in my {account} account?"),
         {"account": ["checking", "savings"]}),
    Case(calculate_tip, "money",
         ("How much should I tip on a {bill_amount} dollar bill?",
          "What's a {tip_percent}% tip on a bill of {bill_amount} dollars?"),
         {"bill_amount": _money(10, 400), "tip_percent": {18: "18", 20: "20", 22: "22", 25: "25"}}),
    Case(translate_text, "knowledge", ('Translate "{text}" into {target_language}.',
                                       'How do you say "{text}" in {target_language}?'),
         {"text": TEXTS, "target_language": LANGUAGES}),
    Case(define_word, "knowledge", ("What does the word {word} mean?", "Define {word}."), {"word": WORDS}),
    Case(search_web, "knowledge", ('Search the web for "{query}".',), {"query": QUERIES}),
    Case(get_news, "knowledge", ("Show me the latest news about {topic}.", "Give me {count} headlines about {topic}."),
         {"topic": TOPICS, "count": _ints(2, 10)}),
    Case(convert_units, "knowledge",
         ("Convert {value} {from_unit} to {to_unit}.", "How much is {value} {from_unit} in {to_unit}?"),
         {"value": _ints(1, 500), ("from_unit", "to_unit"): _unit_pair}),
    Case(log_workout, "health",
         ("Log {duration_minutes} minutes of {activity} in my workout log.",
          "I just did {duration_minutes} minutes of {activity}; record it."),
         {"duration_minutes": _ints(10, 120, 5), "activity": ["running", "cycling", "swimming", "yoga", "walking"]}),
    Case(log_water_intake, "health", ("Log {milliliters} ml of water.", "I drank {milliliters} millilitres of water, note it."),
         {"milliliters": _ints(100, 1500, 50)}),
    Case(create_note, "productivity", ('Create a note titled "{title}" that says "{content}".',),
         {"title": TITLES, "content": BODIES}),
    Case(add_todo, "productivity", ('Add "{task}" to my to-do list.', 'Put "{task}" on my to-do list, due {due_date}.'),
         {"task": TASKS, "due_date": _date}),
    Case(set_out_of_office, "productivity",
         ('Turn on my out-of-office from {start_date} to {end_date} saying "{message}".',),
         {("start_date", "end_date"): _date_range, "message": OOO_MESSAGES}),
)

# Kept as JSON text: json.loads makes a fresh copy several times faster than deepcopy.
_SCHEMAS = {c.name: json.dumps(function_schema(c.fn, defaults=True)) for c in CASES}


def schema_of(name: str) -> dict[str, Any]:
    """The OpenAI schema (with defaults) of the catalog tool ``name`` (a fresh copy)."""
    return json.loads(_SCHEMAS[name])
